//! ELF32 big-endian MIPS executables: loadable segments, sections and the
//! symbol table (entry points such as `__start` or a handler are looked up
//! by name). Every malformed input is an [`Error::Elf`] naming the file.

use crate::error::Error;
use crate::mem::Memory;

/// The largest segment loaded: handlers and firmware are small, and a
/// corrupt size must not make the loader fill gigabytes.
pub const MAX_SEGMENT_BYTES: u32 = 64 << 20;

/// A loadable segment.
#[derive(Clone, Debug)]
pub struct Segment {
    pub vaddr: u32,
    pub data: Vec<u8>,
    /// Size in memory; bytes past `data` are zero (.bss).
    pub memsz: u32,
    pub executable: bool,
}

/// A named section (for reports and tests).
#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub addr: u32,
    pub size: u32,
}

/// A function or object symbol.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub addr: u32,
    pub size: u32,
}

/// A parsed executable.
#[derive(Clone, Debug)]
pub struct Program {
    /// The file name, used in every error about this program.
    pub name: String,
    pub entry: u32,
    pub segments: Vec<Segment>,
    pub sections: Vec<Section>,
    pub symbols: Vec<Symbol>,
}

struct Reader<'a> {
    b: &'a [u8],
    file: &'a str,
}

impl Reader<'_> {
    fn bad(&self, msg: impl Into<String>) -> Error {
        Error::Elf { file: self.file.into(), msg: msg.into() }
    }
    fn bytes(&self, off: u64, len: u64, what: &str) -> Result<&[u8], Error> {
        let end = off.checked_add(len).filter(|&e| e <= self.b.len() as u64);
        match end {
            Some(e) => Ok(&self.b[off as usize..e as usize]),
            None => Err(self.bad(format!("truncated: {what} at offset {off} (+{len}) past the end ({} bytes)", self.b.len()))),
        }
    }
    fn u16(&self, off: u64, what: &str) -> Result<u16, Error> {
        let s = self.bytes(off, 2, what)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    fn u32(&self, off: u64, what: &str) -> Result<u32, Error> {
        let s = self.bytes(off, 4, what)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn cstr(&self, table: &[u8], off: u32) -> String {
        let s = table.get(off as usize..).unwrap_or(&[]);
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        String::from_utf8_lossy(&s[..end]).into_owned()
    }
}

impl Program {
    /// Reads and parses an ELF file.
    pub fn load(path: &std::path::Path) -> Result<Program, Error> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::Elf { file: name.clone(), msg: format!("cannot read: {e}") })?;
        Program::parse(&bytes, &name)
    }

    /// Parses an executable held in memory; `name` is used in errors.
    pub fn parse(b: &[u8], name: &str) -> Result<Program, Error> {
        let r = Reader { b, file: name };
        let ident = r.bytes(0, 16, "ELF header")?;
        if &ident[..4] != b"\x7fELF" {
            return Err(r.bad("not an ELF file (bad magic)"));
        }
        if ident[4] != 1 || ident[5] != 2 {
            return Err(r.bad("not a 32-bit big-endian ELF (this model runs o32 big-endian MIPS)"));
        }
        if r.u16(18, "e_machine")? != 8 {
            return Err(r.bad("not a MIPS executable (e_machine is not EM_MIPS)"));
        }
        if r.u16(16, "e_type")? != 2 {
            return Err(r.bad("not a static executable (e_type is not ET_EXEC; link with -static -nostdlib)"));
        }
        let flags = r.u32(36, "e_flags")?;
        if flags & 0xF000_0000 > 0x2000_0000 {
            return Err(r.bad(format!("built for an ISA beyond MIPS III (e_flags 0x{flags:08x}); compile with -march=r4000")));
        }
        let entry = r.u32(24, "e_entry")?;
        let (phoff, shoff) = (r.u32(28, "e_phoff")? as u64, r.u32(32, "e_shoff")? as u64);
        let (phentsize, phnum) = (r.u16(42, "e_phentsize")? as u64, r.u16(44, "e_phnum")? as u64);
        let (shentsize, shnum, shstrndx) = (r.u16(46, "e_shentsize")? as u64, r.u16(48, "e_shnum")? as u64, r.u16(50, "e_shstrndx")? as u64);

        let mut segments = Vec::new();
        for i in 0..phnum {
            let h = phoff + i * phentsize;
            if r.u32(h, "program header")? != 1 {
                continue; // only PT_LOAD matters
            }
            let (off, vaddr) = (r.u32(h + 4, "p_offset")?, r.u32(h + 8, "p_vaddr")?);
            let (filesz, memsz, pflags) = (r.u32(h + 16, "p_filesz")?, r.u32(h + 20, "p_memsz")?, r.u32(h + 24, "p_flags")?);
            if filesz > memsz {
                return Err(r.bad(format!("segment {i}: p_filesz {filesz} exceeds p_memsz {memsz}")));
            }
            if vaddr.checked_add(memsz).is_none() {
                return Err(r.bad(format!("segment {i}: 0x{vaddr:08x} + {memsz} wraps the address space")));
            }
            if memsz > MAX_SEGMENT_BYTES {
                return Err(r.bad(format!("segment {i}: {memsz} bytes in memory, more than this model loads ({MAX_SEGMENT_BYTES})")));
            }
            let data = r.bytes(off as u64, filesz as u64, &format!("segment {i}"))?.to_vec();
            segments.push(Segment { vaddr, data, memsz, executable: pflags & 1 != 0 });
        }
        if segments.is_empty() {
            return Err(r.bad("no loadable segment"));
        }

        let (mut sections, mut symbols) = (Vec::new(), Vec::new());
        if shoff != 0 && shnum != 0 {
            let sh = |i: u64, f: u64| r.u32(shoff + i * shentsize + f, "section header");
            let strtab_of = |i: u64| -> Result<&[u8], Error> { r.bytes(sh(i, 16)? as u64, sh(i, 20)? as u64, "string table") };
            let names = if shstrndx < shnum { strtab_of(shstrndx)? } else { &[][..] };
            for i in 0..shnum {
                let (name, kind) = (r.cstr(names, sh(i, 0)?), sh(i, 4)?);
                sections.push(Section { name, addr: sh(i, 12)?, size: sh(i, 20)? });
                if kind == 2 {
                    // SHT_SYMTAB: its sh_link names the string table.
                    let link = sh(i, 24)? as u64;
                    if link >= shnum {
                        return Err(r.bad(format!("symbol table's string table index {link} out of range")));
                    }
                    let strings = strtab_of(link)?;
                    let (off, size) = (sh(i, 16)? as u64, sh(i, 20)? as u64);
                    let table = r.bytes(off, size, "symbol table")?;
                    for s in table.chunks_exact(16) {
                        let w = |k: usize| u32::from_be_bytes([s[k], s[k + 1], s[k + 2], s[k + 3]]);
                        let name = r.cstr(strings, w(0));
                        if !name.is_empty() {
                            symbols.push(Symbol { name, addr: w(4), size: w(8) });
                        }
                    }
                }
            }
        }
        Ok(Program { name: name.into(), entry, segments, sections, symbols })
    }

    /// The address of a named symbol.
    pub fn symbol(&self, name: &str) -> Option<u32> {
        self.symbols.iter().find(|s| s.name == name).map(|s| s.addr)
    }

    /// ` in SYMBOL+0xOFF` for an address inside a sized symbol (a function),
    /// or nothing: what a fault message adds after what went wrong.
    pub fn place(&self, addr: u32) -> String {
        let hit = self.symbols.iter().find(|s| s.size > 0 && addr >= s.addr && addr - s.addr < s.size);
        hit.map_or_else(String::new, |s| format!(" in {}+{:#x}", s.name, addr - s.addr))
    }

    /// Copies every segment into a fresh `mem` (whose untouched bytes, .bss
    /// included, read as zero).
    pub fn load_into(&self, mem: &mut Memory) {
        for s in &self.segments {
            mem.write_bytes(s.vaddr, &s.data);
        }
    }

    /// The highest address any segment occupies (the heap may start above it).
    pub fn end(&self) -> u32 {
        self.segments.iter().map(|s| s.vaddr + s.memsz).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_garbage_with_the_file_name() {
        let e = Program::parse(b"hello", "x.elf").unwrap_err().to_string();
        assert!(e.starts_with("x.elf: truncated"), "{e}");
        let mut h = vec![0x7f, b'E', b'L', b'F', 1, 1];
        h.resize(64, 0);
        let e = Program::parse(&h, "le.elf").unwrap_err().to_string();
        assert!(e.contains("big-endian"), "{e}");
    }

    #[test]
    fn rejects_a_huge_segment() {
        // ELF32 BE MIPS ET_EXEC header with one PT_LOAD of 1 GiB memsz at 0x00400000.
        let mut h = vec![0u8; 52 + 32];
        h[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 1, 2]);
        h[16..18].copy_from_slice(&2u16.to_be_bytes());
        h[18..20].copy_from_slice(&8u16.to_be_bytes());
        h[28..32].copy_from_slice(&52u32.to_be_bytes());
        h[42..44].copy_from_slice(&32u16.to_be_bytes());
        h[44..46].copy_from_slice(&1u16.to_be_bytes());
        h[52..56].copy_from_slice(&1u32.to_be_bytes());
        h[60..64].copy_from_slice(&0x40_0000u32.to_be_bytes());
        h[72..76].copy_from_slice(&(1u32 << 30).to_be_bytes());
        let e = Program::parse(&h, "big.elf").unwrap_err().to_string();
        assert!(e.starts_with("big.elf: segment 0: 1073741824 bytes in memory"), "{e}");
    }
}
