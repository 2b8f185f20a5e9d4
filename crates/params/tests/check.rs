//! The checks on flat sections, tables of sections and `KEY=VALUE` strings.

use irqsim_params::{Param, Problem, Range, Section, check_section, d, parse_keys, parse_sets, range_text};
use toml::Table;

const P: &[Param] = &[
    Param::int("n", "", d("3"), 1, 10, "a count"),
    Param::float("f", "", irqsim_params::REQ, true, 0.0, 1.0, "a share").below(),
    Param::choice("c", &["a", "b"], d("\"a\""), "a choice"),
];

fn check(text: &str) -> Result<Table, Problem> {
    let mut t: Table = text.parse().unwrap();
    check_section(&mut t, "s", P).map(|_| t)
}

#[test]
fn defaults_fill_and_required_keys_are_required() {
    let t = check("f = 0.5").unwrap();
    assert_eq!(t["n"].as_integer(), Some(3));
    assert_eq!(t["c"].as_str(), Some("a"));
    assert_eq!(check("n = 2").unwrap_err(), ("s.f".into(), "required key missing".into()));
}

#[test]
fn types_ranges_and_names_are_checked() {
    assert_eq!(check("f = 0.5\nn = 11").unwrap_err().1, "must be 1..=10, got 11");
    assert_eq!(check("f = 1.0").unwrap_err().1, "must be in (0, 1), got 1");
    assert!(check("f = nan").is_err());
    assert!(check("f = 0.5\nn = 1.5").unwrap_err().1.starts_with("invalid type: floating point `1.5`, expected an integer"));
    assert!(check("f = 0.5\nc = \"z\"").unwrap_err().1.starts_with("unknown variant `z`"));
    assert!(check("f = 0.5\nm = 1").unwrap_err().1.starts_with("unknown field `m`"));
}

#[test]
fn ranges_read_like_rust() {
    assert_eq!(range_text(Range::Int(0, 1_000_000_000)), "0..=1_000_000_000");
    assert_eq!(range_text(Range::Float { min: 0.0, min_open: true, max: 1e5, max_open: false }), "(0, 100_000]");
}

/// A machine with a memory model and a cache used only with caches.
const MODEL: &[Param] = &[
    Param::choice("model", &["perfect", "caches"], d("\"perfect\""), "memory"),
    Param::cycles("latency_cycles", d("100"), "miss").when("memory.model", &["caches"]),
];
const CACHE: &[Param] = &[Param::int("ways", "", d("2"), 1, 64, "ways"), Param::text("pins", irqsim_params::absent("none"), "pins")];
const TREE: &[Section] = &[Section::new("memory", "memory", MODEL), Section::new("l1", "a cache", CACHE).when("memory.model", &["caches"])];
const TOP: &[Param] = &[Param::sections("core", TREE, "the core")];

fn tree(text: &str) -> Result<Table, Problem> {
    let mut t: Table = text.parse().unwrap();
    check_section(&mut t, "", TOP).map(|_| t)
}

#[test]
fn sections_fill_defaults_only_where_they_apply() {
    let t = tree("").unwrap();
    assert_eq!(t["core"]["memory"].as_table().unwrap().len(), 1, "no latency without caches: {t}");
    assert!(t["core"].get("l1").is_none());
    let t = tree("[core.memory]\nmodel = \"caches\"").unwrap();
    assert_eq!(t["core"]["l1"]["ways"].as_integer(), Some(2));
    assert_eq!(t["core"]["memory"]["latency_cycles"].as_integer(), Some(100));
}

#[test]
fn sections_refuse_what_does_not_apply() {
    let e = tree("[core.l1]\nways = 4").unwrap_err();
    assert_eq!(e, ("core.l1.ways".into(), "only used when `core.memory.model` is `caches` (it is `perfect`); remove the key".into()));
    assert_eq!(tree("[core.memory]\nlatency_cycles = 5").unwrap_err().0, "core.memory.latency_cycles");
    assert_eq!(tree("[core.memory]\nmodel = \"caches\"\n[core.l1]\nways = 65").unwrap_err(), ("core.l1.ways".into(), "must be 1..=64, got 65".into()));
    assert!(tree("[core.l2]\nways = 4").unwrap_err().1.starts_with("unknown section `l2`, expected one of `memory`, `l1`"));
    assert!(tree("core = 3").unwrap_err().1.starts_with("invalid type: integer `3`, expected a table"));
}

#[test]
fn the_list_form_reads_as_the_table_form() {
    let list = tree("core = [\"memory.model=caches\", \"l1.ways=0x4\", \"l1.pins=1:3\"]").unwrap();
    let table = tree("[core.memory]\nmodel = \"caches\"\n[core.l1]\nways = 4\npins = \"1:3\"").unwrap();
    assert_eq!(list, table);
    assert_eq!(tree("core = [\"l9.ways=1\"]").unwrap_err().0, "core");
    assert!(tree("core = [\"l9.ways=1\"]").unwrap_err().1.starts_with("`l9.ways`: unknown section `l9`"));
    assert_eq!(tree("core = [1]").unwrap_err().0, "core[0]");
    assert_eq!(tree("core = [\"memory.model=caches\", \"l1.ways=x\"]").unwrap_err().1, "invalid type: string \"x\", expected an integer");
}

#[test]
fn sets_are_typed_by_their_declaration() {
    let t = parse_sets(&["l1.ways=1_6", "l1.pins=none", "memory.model=caches"], TREE).unwrap();
    assert_eq!(t["l1"]["ways"].as_integer(), Some(16));
    assert!(t["l1"].get("pins").is_none());
    assert_eq!(parse_sets(&["noequals"], TREE).unwrap_err(), ("noequals".into(), "expected KEY=VALUE".into()));
    assert!(parse_sets(&["l1.colour=red"], TREE).unwrap_err().1.starts_with("unknown field `colour`"));
    let t = parse_keys(&["n=-3", "f=0.5", "c=b"], P).unwrap();
    assert_eq!((t["n"].as_integer(), t["f"].as_float(), t["c"].as_str()), (Some(-3), Some(0.5), Some("b")));
}

#[test]
fn a_default_out_of_its_own_range_is_found() {
    const BAD_ITEM: &[Param] = &[Param::int("w", "", d("0"), 1, 64, "ways")];
    const BAD: &[Section] = &[Section::new("l1", "a cache", BAD_ITEM)];
    assert!(irqsim_params::check_defaults("", P).is_ok());
    assert!(irqsim_params::check_defaults("", TOP).is_ok());
    let e = irqsim_params::check_defaults("", &[Param::sections("core", BAD, "the core")]).unwrap_err();
    assert_eq!(e, ("core.l1.w".into(), "must be 1..=64, got 0".into()));
}
