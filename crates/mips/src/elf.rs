//! ELF32 big-endian MIPS executables: loadable segments, sections and the
//! symbol table (entry points such as `__start` or a handler are looked up
//! by name). Every malformed input is an [`Error::Elf`] naming the file.
//! Loadable segments must not overlap (as qemu refuses them); a segment
//! with nothing in the file (`.bss`) may have any offset, as gcc sometimes
//! gives one past the file's end.

use crate::error::Error;
use crate::mem::Memory;

/// The largest segment loaded: handlers and firmware are small, and a
/// corrupt size must not make the loader fill gigabytes.
pub const MAX_SEGMENT_BYTES: u32 = 64 << 20;

/// The largest span of executable segments, lowest to highest address: the
/// text is decoded whole, with its blocks about 44 bytes of host memory an
/// instruction (a 64 MiB span took 700 MB), and programs here are small.
pub const MAX_TEXT_BYTES: u32 = 16 << 20;

/// Sizes of an ELF32 program header and section header: Linux refuses a
/// file whose `e_phentsize` differs (fs/binfmt_elf.c, `load_elf_phdrs`), and
/// with a size of 0 every one of up to 65,535 headers would be the same.
const PHDR_BYTES: u64 = 32;
const SHDR_BYTES: u64 = 40;
/// Program headers at most: Linux reads at most 64 KiB of them (`load_elf_phdrs`).
const MAX_PHNUM: u64 = 65_536 / PHDR_BYTES;
/// Bytes of section and symbol names kept at most. Names may share a string
/// table's bytes, so a small crafted file could name a million symbols with
/// one long string each; a real program's names take kilobytes.
const MAX_NAME_BYTES: usize = 64 << 20;

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
    /// The NUL-terminated name at `off` in `table`, counted against `left`.
    fn cstr(&self, table: &[u8], off: u32, left: &mut usize) -> Result<String, Error> {
        let s = table.get(off as usize..).unwrap_or(&[]);
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        *left = left.checked_sub(end).ok_or_else(|| self.bad(format!("section and symbol names add up to more than {MAX_NAME_BYTES} bytes")))?;
        Ok(String::from_utf8_lossy(&s[..end]).into_owned())
    }
}

impl Program {
    /// Reads and parses an ELF file.
    pub fn load(path: &std::path::Path) -> Result<Program, Error> {
        let name = path.display().to_string();
        // A FIFO would block the open and never end: only a regular file is read.
        let meta = std::fs::metadata(path).map_err(|e| Error::Elf { file: name.clone(), msg: format!("cannot read: {e}") })?;
        if !meta.is_file() {
            return Err(Error::Elf { file: name, msg: "not a regular file; give a file".into() });
        }
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
        if phentsize != PHDR_BYTES || phnum > MAX_PHNUM {
            return Err(r.bad(format!(
                "{phnum} program headers of {phentsize} bytes; an ELF32 file has at most {MAX_PHNUM} of {PHDR_BYTES} bytes (Linux refuses it too)"
            )));
        }
        if shnum != 0 && shentsize != SHDR_BYTES {
            return Err(r.bad(format!("section headers of {shentsize} bytes; an ELF32 section header has {SHDR_BYTES}")));
        }

        let mut segments: Vec<(u64, Segment)> = Vec::new();
        for i in 0..phnum {
            let h = phoff + i * phentsize;
            if r.u32(h, "program header")? != 1 {
                continue; // only PT_LOAD matters
            }
            let (off, vaddr) = (r.u32(h + 4, "p_offset")?, r.u32(h + 8, "p_vaddr")?);
            let (filesz, memsz, pflags) = (r.u32(h + 16, "p_filesz")?, r.u32(h + 20, "p_memsz")?, r.u32(h + 24, "p_flags")?);
            if memsz == 0 && filesz == 0 {
                continue; // maps nothing (an executable one stretched the text to its address)
            }
            if filesz > memsz {
                return Err(r.bad(format!("segment {i}: p_filesz {filesz} exceeds p_memsz {memsz}")));
            }
            if vaddr.checked_add(memsz).is_none() {
                return Err(r.bad(format!("segment {i}: 0x{vaddr:08x} + {memsz} wraps the address space")));
            }
            if memsz > MAX_SEGMENT_BYTES {
                return Err(r.bad(format!("segment {i}: {memsz} bytes in memory, more than this model loads ({MAX_SEGMENT_BYTES})")));
            }
            // Nothing to read (.bss): the offset is not looked at, as the kernel does not.
            let data = if filesz == 0 { Vec::new() } else { r.bytes(off as u64, filesz as u64, &format!("segment {i}"))?.to_vec() };
            if let Some((j, other)) = segments.iter().find(|(_, o)| overlap(o, vaddr, memsz)) {
                let end = |v: u32, m: u32| v as u64 + m as u64;
                return Err(r.bad(format!(
                    "segment {i} (0x{vaddr:08x}-0x{:08x}) overlaps segment {j} (0x{:08x}-0x{:08x}); qemu refuses such a file too",
                    end(vaddr, memsz),
                    other.vaddr,
                    end(other.vaddr, other.memsz)
                )));
            }
            segments.push((i, Segment { vaddr, data, memsz, executable: pflags & 1 != 0 }));
        }
        let segments: Vec<Segment> = segments.into_iter().map(|(_, s)| s).collect();
        if segments.is_empty() {
            return Err(r.bad("no loadable segment"));
        }
        let text = segments.iter().filter(|s| s.executable);
        if let (Some(lo), Some(hi)) = (text.clone().map(|s| s.vaddr).min(), text.map(|s| s.vaddr as u64 + s.memsz as u64).max())
            && hi - lo as u64 > MAX_TEXT_BYTES as u64
        {
            return Err(r.bad(format!("executable segments span 0x{lo:08x}-0x{hi:08x}, more than this model decodes ({MAX_TEXT_BYTES} bytes)")));
        }

        let (mut sections, mut symbols, mut seen_symtab, mut names_left) = (Vec::new(), Vec::new(), false, MAX_NAME_BYTES);
        if shoff != 0 && shnum != 0 {
            let sh = |i: u64, f: u64| r.u32(shoff + i * shentsize + f, "section header");
            let strtab_of = |i: u64| -> Result<&[u8], Error> { r.bytes(sh(i, 16)? as u64, sh(i, 20)? as u64, "string table") };
            let names = if shstrndx < shnum { strtab_of(shstrndx)? } else { &[][..] };
            for i in 0..shnum {
                let (name, kind) = (r.cstr(names, sh(i, 0)?, &mut names_left)?, sh(i, 4)?);
                sections.push(Section { name, addr: sh(i, 12)?, size: sh(i, 20)? });
                if kind == 2 {
                    // SHT_SYMTAB: its sh_link names the string table. The ELF format allows one
                    // (many headers naming one big table would read it again for each).
                    if seen_symtab {
                        return Err(r.bad(format!("section {i}: a second symbol table (SHT_SYMTAB); an ELF file has at most one")));
                    }
                    seen_symtab = true;
                    let link = sh(i, 24)? as u64;
                    if link >= shnum {
                        return Err(r.bad(format!("symbol table's string table index {link} out of range")));
                    }
                    let strings = strtab_of(link)?;
                    let (off, size) = (sh(i, 16)? as u64, sh(i, 20)? as u64);
                    let table = r.bytes(off, size, "symbol table")?;
                    for s in table.chunks_exact(16) {
                        let w = |k: usize| u32::from_be_bytes([s[k], s[k + 1], s[k + 2], s[k + 3]]);
                        let name = r.cstr(strings, w(0), &mut names_left)?;
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
        hit.map_or_else(String::new, |s| format!(" in {}+{:#x}", escape(&s.name), addr - s.addr))
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

/// Whether segment `s` shares a byte with `memsz` bytes at `vaddr` (empty segments share none).
fn overlap(s: &Segment, vaddr: u32, memsz: u32) -> bool {
    let (a, b) = (s.vaddr as u64, s.vaddr as u64 + s.memsz as u64);
    let (c, d) = (vaddr as u64, vaddr as u64 + memsz as u64);
    a < b && c < d && a < d && c < b
}

/// `text` with control and invisible format characters as `\u{..}` escapes:
/// a symbol name is the file's bytes, and an error message quotes it.
pub fn escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}') {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
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

    /// An ELF32 BE MIPS ET_EXEC header with PT_LOADs of `(offset, vaddr, filesz, memsz)`.
    fn elf(segments: &[(u32, u32, u32, u32)]) -> Vec<u8> {
        let mut h = vec![0u8; 52 + 32 * segments.len()];
        h[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 1, 2]);
        h[16..18].copy_from_slice(&2u16.to_be_bytes());
        h[18..20].copy_from_slice(&8u16.to_be_bytes());
        h[28..32].copy_from_slice(&52u32.to_be_bytes());
        h[42..44].copy_from_slice(&32u16.to_be_bytes());
        h[44..46].copy_from_slice(&(segments.len() as u16).to_be_bytes());
        for (i, &(off, vaddr, filesz, memsz)) in segments.iter().enumerate() {
            let p = 52 + 32 * i;
            for (k, v) in [1, off, vaddr, vaddr, filesz, memsz].into_iter().enumerate() {
                h[p + 4 * k..p + 4 * k + 4].copy_from_slice(&v.to_be_bytes());
            }
        }
        h
    }

    #[test]
    fn rejects_a_huge_segment() {
        let e = Program::parse(&elf(&[(0, 0x40_0000, 0, 1 << 30)]), "big.elf").unwrap_err().to_string();
        assert!(e.starts_with("big.elf: segment 0: 1073741824 bytes in memory"), "{e}");
    }

    /// A header size of 0 made up to 65,535 program headers of one and the same bytes, each
    /// read in turn; Linux refuses any size but 32 and more than 64 KiB of headers.
    #[test]
    fn rejects_odd_program_header_tables() {
        let mut h = elf(&[(0, 0x40_0000, 16, 16)]);
        h[42..44].copy_from_slice(&0u16.to_be_bytes());
        h[44..46].copy_from_slice(&u16::MAX.to_be_bytes());
        let e = Program::parse(&h, "z.elf").unwrap_err().to_string();
        assert_eq!(e, "z.elf: 65535 program headers of 0 bytes; an ELF32 file has at most 2048 of 32 bytes (Linux refuses it too)");
        h[42..44].copy_from_slice(&32u16.to_be_bytes());
        h[44..46].copy_from_slice(&2049u16.to_be_bytes());
        assert!(Program::parse(&h, "n.elf").unwrap_err().to_string().starts_with("n.elf: 2049 program headers of 32 bytes"));
    }

    /// Section headers: 40 bytes each, and one symbol table (many headers naming one table
    /// would each have read it again).
    #[test]
    fn rejects_odd_section_header_tables() {
        // Two SHT_SYMTABs with an empty table, each linking to section 0.
        let mut h = with_sections(elf(&[(0, 0x40_0000, 16, 16)]), &[(2, 0, 0, 0), (2, 0, 0, 0)]);
        h[46..48].copy_from_slice(&0u16.to_be_bytes());
        let e = Program::parse(&h, "s.elf").unwrap_err().to_string();
        assert_eq!(e, "s.elf: section headers of 0 bytes; an ELF32 section header has 40");
        h[46..48].copy_from_slice(&40u16.to_be_bytes());
        let e = Program::parse(&h, "s.elf").unwrap_err().to_string();
        assert_eq!(e, "s.elf: section 1: a second symbol table (SHT_SYMTAB); an ELF file has at most one");
        h[48..50].copy_from_slice(&1u16.to_be_bytes());
        assert!(Program::parse(&h, "s.elf").is_ok());
    }

    /// `h` with section headers of `(sh_type, sh_offset, sh_size, sh_link)` appended.
    fn with_sections(mut h: Vec<u8>, sections: &[(u32, u32, u32, u32)]) -> Vec<u8> {
        let shoff = h.len() as u32;
        for &(kind, off, size, link) in sections {
            let mut sh = [0u8; 40];
            for (f, v) in [(4, kind), (16, off), (20, size), (24, link)] {
                sh[f..f + 4].copy_from_slice(&v.to_be_bytes());
            }
            h.extend_from_slice(&sh);
        }
        h[32..36].copy_from_slice(&shoff.to_be_bytes());
        h[46..48].copy_from_slice(&40u16.to_be_bytes());
        h[48..50].copy_from_slice(&(sections.len() as u16).to_be_bytes());
        h
    }

    /// Symbols may share their string table's bytes: 4,096 symbols naming one 2 MiB string
    /// (a 2 MiB file) kept 8 GiB of names. Names are bounded in all.
    #[test]
    fn names_are_bounded_in_all() {
        let mut h = elf(&[(0, 0x40_0000, 16, 16)]);
        let strings = h.len() as u32;
        h.resize(h.len() + (2 << 20), b'a');
        let table = h.len() as u32;
        h.resize(h.len() + 16 * 4096, 0);
        let shoff = h.len();
        let h = &mut with_sections(h, &[(0, 0, 0, 0), (3, strings, 2 << 20, 0), (2, table, 16 * 4096, 1)]);
        let e = Program::parse(h, "n.elf").unwrap_err().to_string();
        assert_eq!(e, "n.elf: section and symbol names add up to more than 67108864 bytes");
        // 31 such names (62 MiB) are kept.
        h[shoff + 80 + 20..shoff + 80 + 24].copy_from_slice(&(16u32 * 31).to_be_bytes());
        assert_eq!(Program::parse(h, "n.elf").unwrap().symbols.len(), 31);
    }

    /// An empty executable segment at 0x11 stretched the decoded text from there to the real
    /// one (1 M instructions, renewed at each store: 10 s for 60,000 cycles); segments far
    /// apart would have made gigabytes of it.
    #[test]
    fn the_text_is_what_the_executable_segments_hold() {
        let mut h = elf(&[(0, 0x40_0000, 16, 16), (0, 0x11, 0, 0)]);
        h[52 + 32 + 24..52 + 32 + 28].copy_from_slice(&5u32.to_be_bytes());
        assert_eq!(Program::parse(&h, "e.elf").unwrap().segments.len(), 1);
        let mut h = elf(&[(0, 0x40_0000, 16, 16), (0, 0x7000_0000, 16, 16)]);
        for k in 0..2 {
            h[52 + 32 * k + 24..52 + 32 * k + 28].copy_from_slice(&5u32.to_be_bytes());
        }
        let e = Program::parse(&h, "far.elf").unwrap_err().to_string();
        assert_eq!(e, "far.elf: executable segments span 0x00400000-0x70000010, more than this model decodes (16777216 bytes)");
    }

    /// Overlapping PT_LOADs were accepted (the later overwrote the earlier); qemu refuses them.
    #[test]
    fn rejects_overlapping_segments() {
        let e = Program::parse(&elf(&[(0, 0x40_0000, 16, 0x1000), (0, 0x40_0800, 16, 0x1000)]), "o.elf").unwrap_err().to_string();
        assert_eq!(e, "o.elf: segment 1 (0x00400800-0x00401800) overlaps segment 0 (0x00400000-0x00401000); qemu refuses such a file too");
        // Adjacent segments, and an empty one inside another, are fine.
        assert!(Program::parse(&elf(&[(0, 0x40_0000, 16, 0x1000), (0, 0x40_1000, 16, 0x1000), (0, 0x40_0800, 0, 0)]), "a.elf").is_ok());
    }

    /// A .bss segment (nothing in the file) whose offset is past the file's end was
    /// refused as truncated; the kernel and qemu never read it, and gcc writes such files.
    #[test]
    fn bss_offset_past_the_end_is_not_read() {
        let p = Program::parse(&elf(&[(0, 0x40_0000, 16, 16), (0x10_0000, 0x41_0000, 0, 0x2000)]), "bss.elf").unwrap();
        assert_eq!((p.segments[1].data.len(), p.end()), (0, 0x41_2000));
        let e = Program::parse(&elf(&[(0x10_0000, 0x41_0000, 4, 0x2000)]), "t.elf").unwrap_err().to_string();
        assert!(e.starts_with("t.elf: truncated: segment 0"), "{e}");
    }

    /// A symbol name is quoted escaped: a fault inside it names it without raw control bytes.
    #[test]
    fn symbol_names_are_escaped_in_messages() {
        let mut p = Program::parse(&elf(&[(0, 0x40_0000, 16, 16)]), "s.elf").unwrap();
        p.symbols.push(Symbol { name: "f\u{10}\u{1b}[2J\u{202e}x".into(), addr: 0x40_0000, size: 16 });
        assert_eq!(p.place(0x40_0004), " in f\\u{10}\\u{1b}[2J\\u{202e}x+0x4");
    }
}
