//! Declarations: [`Param`] for one key, [`Section`] for a named table of
//! them, and the types, defaults and ranges they are built from.

/// The type of a key's value.
#[derive(Debug, Clone, Copy)]
pub enum Type {
    Int,
    Float,
    Bool,
    Str,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// An array of integers (the range applies to each).
    IntList,
    /// An array of floats (the range applies to each).
    FloatList,
    /// An array of strings.
    StrList,
    /// An array of tables, each with these keys.
    Items(&'static [Param]),
    /// An unsigned 64-bit integer; beyond TOML's 2^63−1 it is written as a
    /// decimal string.
    U64,
    /// A table of these named sub-tables (`[code.core.l1d]`). Also accepted
    /// as a list of `"section.key=value"` strings, read as [`parse_sets`](crate::parse_sets)
    /// reads the command line's.
    Sections(&'static [Section]),
}

/// What a key is when the scenario does not give it.
#[derive(Debug, Clone, Copy)]
pub enum Def {
    /// The key must be given.
    Required,
    /// The key may be left out; the text says what that means.
    Absent(&'static str),
    /// This value, as TOML.
    Value(&'static str),
}

/// Shorthands for table rows: a required key, a default, an optional key.
pub const REQ: Def = Def::Required;
pub const fn d(toml: &'static str) -> Def {
    Def::Value(toml)
}
pub const fn absent(meaning: &'static str) -> Def {
    Def::Absent(meaning)
}

/// The values a number may take.
#[derive(Debug, Clone, Copy)]
pub enum Range {
    None,
    /// Integers in `min..=max`.
    Int(i128, i128),
    /// Floats from `min` to `max`; an open end excludes its bound.
    Float {
        min: f64,
        min_open: bool,
        max: f64,
        max_open: bool,
    },
}

/// A key that only means something when another key has one of some values.
#[derive(Debug, Clone, Copy)]
pub struct When {
    /// Dotted path of the deciding key, from the top of the tree the key is
    /// checked in (the scenario, or a [`Type::Sections`] table).
    pub key: &'static str,
    pub is: &'static [&'static str],
}

/// One key of one part.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub key: &'static str,
    pub ty: Type,
    /// Unit of the value as the docs write it (empty for none); the key's
    /// name ends with it spelled out (a test holds them to one spelling).
    pub unit: &'static str,
    pub default: Def,
    pub range: Range,
    pub when: Option<When>,
    pub help: &'static str,
}

/// A named table of keys inside a [`Type::Sections`] key: `l1d` of `code.core`.
#[derive(Debug, Clone, Copy)]
pub struct Section {
    pub name: &'static str,
    pub help: &'static str,
    pub params: &'static [Param],
    /// The whole section only means something when this holds: otherwise
    /// its keys are refused and its defaults left out.
    pub when: Option<When>,
}

/// Largest cost of one step of any software path, in cycles: far from
/// 64-bit overflow however costs are summed.
pub const MAX_CYCLES: i128 = 1_000_000_000;

impl Param {
    /// An integer in `min..=max`.
    pub const fn int(key: &'static str, unit: &'static str, default: Def, min: i128, max: i128, help: &'static str) -> Self {
        Self::of(key, Type::Int, unit, default, Range::Int(min, max), help)
    }
    /// A cost in cycles: an integer in `0..=MAX_CYCLES`.
    pub const fn cycles(key: &'static str, default: Def, help: &'static str) -> Self {
        Self::int(key, "cycles", default, 0, MAX_CYCLES, help)
    }
    /// A float in `[min, max]`, or `(min, max]` when `positive`.
    pub const fn float(key: &'static str, unit: &'static str, default: Def, positive: bool, min: f64, max: f64, help: &'static str) -> Self {
        Self::of(key, Type::Float, unit, default, Range::Float { min, min_open: positive, max, max_open: false }, help)
    }
    pub const fn choice(key: &'static str, values: &'static [&'static str], default: Def, help: &'static str) -> Self {
        Self::of(key, Type::Choice(values), "", default, Range::None, help)
    }
    pub const fn flag(key: &'static str, default: Def, help: &'static str) -> Self {
        Self::of(key, Type::Bool, "", default, Range::None, help)
    }
    pub const fn text(key: &'static str, default: Def, help: &'static str) -> Self {
        Self::of(key, Type::Str, "", default, Range::None, help)
    }
    pub const fn items(key: &'static str, params: &'static [Param], default: Def, help: &'static str) -> Self {
        Self::of(key, Type::Items(params), "", default, Range::None, help)
    }
    /// A table of named sub-tables; absent, each takes its defaults.
    pub const fn sections(key: &'static str, sections: &'static [Section], help: &'static str) -> Self {
        Self::of(key, Type::Sections(sections), "", Def::Value("{}"), Range::None, help)
    }
    /// Any type and range (lists, 64-bit integers).
    pub const fn of(key: &'static str, ty: Type, unit: &'static str, default: Def, range: Range, help: &'static str) -> Self {
        Self { key, ty, unit, default, range, when: None, help }
    }
    /// Excludes the upper bound of a float range.
    pub const fn below(mut self) -> Self {
        if let Range::Float { min, min_open, max, .. } = self.range {
            self.range = Range::Float { min, min_open, max, max_open: true };
        }
        self
    }
    /// Only meaningful when `key` has one of `is`; given otherwise, refused.
    pub const fn when(mut self, key: &'static str, is: &'static [&'static str]) -> Self {
        self.when = Some(When { key, is });
        self
    }
}

impl Section {
    pub const fn new(name: &'static str, help: &'static str, params: &'static [Param]) -> Self {
        Self { name, help, params, when: None }
    }
    /// Only meaningful when `key` has one of `is`.
    pub const fn when(mut self, key: &'static str, is: &'static [&'static str]) -> Self {
        self.when = Some(When { key, is });
        self
    }
}
