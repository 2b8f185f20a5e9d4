/* Minimal runtime for freestanding MIPS programs run by `irqsim exec`
   and qemu-mips: Linux o32 system calls, printing, and the memory
   functions gcc may call. */
#ifndef RT_H
#define RT_H

typedef unsigned int size_t;
typedef unsigned int u32;
typedef int i32;
typedef unsigned short u16;
typedef unsigned char u8;

long sys_write(int fd, const void *buf, size_t len);
void sys_exit(int code) __attribute__((noreturn));
size_t strlen(const char *s);
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

void put_str(const char *s);
void put_int(int v);
void put_uint(u32 v);
void put_hex(u32 v);
/* "name=value\n" in decimal. */
void put_kv(const char *name, int v);

/* Built-in device registers of irqsim (docs/models/cores.md); reading
   them under qemu-mips faults, so only cache/SMT programs use them. */
#define MMIO(off) (*(volatile u32 *)(0xBF000000u + (off)))
#define REG_CYCLE_LO 0x00
#define REG_INSTRET 0x08
#define REG_THREAD_ID 0x0C
#define CACHE_L1I 0x100
#define CACHE_L1D 0x200
#define CACHE_L2 0x300
#define PIN_WAY_MASK 0x00
#define PIN_SET_FIRST 0x04
#define PIN_SET_COUNT 0x08
#define PIN_RANGE_BASE 0x0C
#define PIN_RANGE_LEN 0x10
#define PIN_TRACE 0x14
#define PIN_UNLOCK 0x18
#define PIN_MISSES 0x1C
#define PIN_ACCESSES 0x20

#endif
