/* Entry point of a freestanding o32 program: set $gp for small data,
   call main, then exit with its return value. */
	.text
	.globl	__start
	.ent	__start
	.set	noreorder
__start:
	la	$gp, _gp
	jal	main
	addiu	$sp, $sp, -16		/* delay slot: o32 argument save area */
	move	$a0, $v0
	li	$v0, 4001		/* exit */
	syscall
	.end	__start
