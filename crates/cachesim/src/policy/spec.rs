//! A policy as `--policy` writes it: a name, parameters under libCacheSim's
//! names (`s3fifo:small-size-ratio=0.2`, short forms such as `small=0.2`
//! too), and an admission filter after a `+` (`lru+bloom`). Parsing checks
//! every name and range, so a cache is only built from a valid spec.

use std::fmt;
use std::str::FromStr;

use super::admission::AdmissionSpec;
use super::{Policy, PolicyKind, UnknownPolicy};

/// The generator's state in a fresh libCacheSim thread, the randomized
/// policies' default seed.
const LIBCACHESIM_SEED: f64 = super::admission::Lehmer64::LIBCACHESIM_SEED as f64;

/// `seed`, which every policy and filter that draws random numbers takes.
pub(crate) const SEED: ParamDef = whole("seed", &[], LIBCACHESIM_SEED, 1.0, 1.8e19);

/// One parameter a policy (or admission filter) takes.
pub(crate) struct ParamDef {
    /// libCacheSim's name (as its `-e` option and `*_parse_params` spell it).
    name: &'static str,
    /// Other spellings accepted.
    aliases: &'static [&'static str],
    default: f64,
    /// Accepted range, inclusive; whole numbers only when `integer`.
    min: f64,
    max: f64,
    integer: bool,
    /// The ends excluded (libCacheSim refuses the value at that end).
    min_open: bool,
    max_open: bool,
}

const fn ratio(name: &'static str, aliases: &'static [&'static str], default: f64) -> ParamDef {
    param(name, aliases, default, 0.0, 1.0, false)
}

const fn whole(
    name: &'static str,
    aliases: &'static [&'static str],
    default: f64,
    min: f64,
    max: f64,
) -> ParamDef {
    param(name, aliases, default, min, max, true)
}

/// The parameters of `kind`, with libCacheSim 0.3.5's defaults.
fn defs(kind: PolicyKind) -> &'static [ParamDef] {
    const S3FIFO: &[ParamDef] = &[
        ParamDef {
            min_open: true,
            max_open: true,
            ..ratio("small-size-ratio", &["small", "fifo-size-ratio"], 0.1)
        },
        ParamDef {
            max: 64.0,
            ..ratio("ghost-size-ratio", &["ghost"], 0.9)
        },
        whole("move-to-main-threshold", &["move"], 2.0, 1.0, 255.0),
    ];
    const TWOQ: &[ParamDef] = &[
        ratio("Ain-size-ratio", &["ain"], 0.25),
        ParamDef {
            max: 64.0,
            ..ratio("Aout-size-ratio", &["aout"], 0.5)
        },
    ];
    const MQ: &[ParamDef] = &[
        whole("n-queue", &["queues"], 8.0, 1.0, 64.0),
        whole("lifetime", &[], 10_000.0, 1.0, 1e15),
        ParamDef {
            max: 64.0,
            min_open: true,
            ..ratio("Qout-size-ratio", &["qout"], 4.0)
        },
    ];
    const CLOCK: &[ParamDef] = &[whole("n-bit-counter", &["bits"], 1.0, 1.0, 3.0)];
    const SLRU: &[ParamDef] = &[whole("n-seg", &["segments"], 4.0, 1.0, 16.0)];
    const LRUK: &[ParamDef] = &[whole("k", &[], 2.0, 1.0, 64.0)];
    const RANDOM: &[ParamDef] = &[SEED];
    const LRUPROB: &[ParamDef] = &[ratio("prob", &["p"], 0.5), SEED];
    const HYPERBOLIC: &[ParamDef] = &[whole("n-sample", &["samples"], 64.0, 1.0, 1e6), SEED];
    const BELADYSIZE: &[ParamDef] = &[whole("n-sample", &["samples"], 128.0, 1.0, 1e6), SEED];
    const CLOCK2QPLUS: &[ParamDef] = &[
        ratio("fifo-size-ratio", &["small", "small-size-ratio"], 0.1),
        ParamDef {
            max: 64.0,
            ..ratio("ghost-size-ratio", &["ghost"], 0.9)
        },
        whole("move-to-main-threshold", &["move"], 1.0, 1.0, 255.0),
        ratio("corr-window-ratio", &["corr"], 0.5),
    ];
    const WTINYLFU: &[ParamDef] = &[ParamDef {
        max_open: true,
        ..ratio("window-size", &["window"], 0.01)
    }];
    const LHD: &[ParamDef] = &[SEED];
    const CACHEUS: &[ParamDef] = &[SEED];
    const CLOCKPRO: &[ParamDef] = &[
        whole("init-ref", &[], 0.0, 0.0, 1.0),
        ratio("init-ratio-cold", &["cold"], 0.5),
    ];
    const LECAR: &[ParamDef] = &[
        whole("update-weight", &[], 1.0, 0.0, 1.0),
        ratio("lru-weight", &[], 0.5),
        SEED,
    ];
    const FLASHPROB: &[ParamDef] = &[
        ParamDef {
            min_open: true,
            max_open: true,
            ..ratio("ram-size-ratio", &["ram"], 0.05)
        },
        ratio("disk-admit-prob", &["p"], 0.2),
        SEED,
    ];
    match kind {
        PolicyKind::S3Fifo => S3FIFO,
        PolicyKind::TwoQ => TWOQ,
        PolicyKind::Mq => MQ,
        PolicyKind::Clock { .. } => CLOCK,
        PolicyKind::Slru { .. } => SLRU,
        PolicyKind::LruK => LRUK,
        PolicyKind::Random => RANDOM,
        PolicyKind::LruProb => LRUPROB,
        PolicyKind::FlashProb => FLASHPROB,
        PolicyKind::WTinyLfu => WTINYLFU,
        PolicyKind::LeCaR => LECAR,
        PolicyKind::Lhd => LHD,
        PolicyKind::Cacheus => CACHEUS,
        PolicyKind::ClockPro => CLOCKPRO,
        PolicyKind::Clock2QPlus => CLOCK2QPLUS,
        PolicyKind::Hyperbolic => HYPERBOLIC,
        PolicyKind::BeladySize => BELADYSIZE,
        _ => &[],
    }
}

/// A policy with its parameters and admission filter.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySpec {
    pub kind: PolicyKind,
    /// Parameters set explicitly, by libCacheSim's name (those a
    /// [`PolicyKind`] variant carries, such as CLOCK's bits, are folded
    /// into the kind instead).
    params: Vec<(&'static str, f64)>,
    /// Objects a miss brings in only when the filter admits them.
    pub admission: Option<AdmissionSpec>,
}

impl From<PolicyKind> for PolicySpec {
    fn from(kind: PolicyKind) -> PolicySpec {
        PolicySpec {
            kind,
            params: Vec::new(),
            admission: None,
        }
    }
}

impl PolicySpec {
    /// The value of parameter `name` (libCacheSim's name): set, or the
    /// default.
    pub fn param(&self, name: &str) -> f64 {
        self.params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|p| p.1)
            .or_else(|| {
                defs(self.kind)
                    .iter()
                    .find(|d| d.name == name)
                    .map(|d| d.default)
            })
            .unwrap_or_else(|| panic!("{} has no parameter {name}", self.kind))
    }

    /// Refuses a size at which libCacheSim 0.3.5 refuses the policy: S3-FIFO
    /// and FlashProb split the cache by a ratio, and a part of no unit
    /// (`(capacity × ratio)` rounded down, or the rest) is an error there.
    pub fn check_capacity(&self, capacity: u64) -> Result<(), SpecError> {
        let split = match self.kind {
            PolicyKind::S3Fifo => Some(("small-size-ratio", "small FIFO", "main FIFO")),
            PolicyKind::FlashProb => Some(("ram-size-ratio", "RAM cache", "disk cache")),
            _ => None,
        };
        if let Some((name, a, b)) = split {
            let part = (capacity as f64 * self.param(name)) as u64;
            if part == 0 || part >= capacity {
                return Err(SpecError::Refused(format!(
                    "{self} at size {capacity}: the {a} would hold {part} and the {b} {} \
                     (libCacheSim refuses a part of size 0)",
                    capacity.saturating_sub(part)
                )));
            }
        }
        Ok(())
    }

    /// A cache of this policy holding `capacity` units (with its admission
    /// filter in front).
    pub fn build(&self, capacity: u64) -> Box<dyn Policy> {
        use super::*;
        let p = |n| self.param(n);
        let policy: Box<dyn Policy> = match self.kind {
            PolicyKind::S3Fifo => Box::new(S3Fifo::with_params(
                capacity,
                p("small-size-ratio"),
                p("ghost-size-ratio"),
                p("move-to-main-threshold") as u64,
            )),
            PolicyKind::TwoQ => Box::new(TwoQ::with_ratios(
                capacity,
                p("Ain-size-ratio"),
                p("Aout-size-ratio"),
            )),
            PolicyKind::Mq => Box::new(Mq::with_params(
                capacity,
                p("n-queue") as usize,
                p("lifetime") as u64,
                p("Qout-size-ratio"),
            )),
            PolicyKind::LruK => Box::new(LruK::new(capacity, p("k") as usize)),
            PolicyKind::Random => Box::new(Random::new(capacity, p("seed") as u64)),
            PolicyKind::LruProb => Box::new(LruProb::new(capacity, p("prob"), p("seed") as u64)),
            PolicyKind::FlashProb => Box::new(FlashProb::new(
                capacity,
                p("ram-size-ratio"),
                p("disk-admit-prob"),
                p("seed") as u64,
            )),
            PolicyKind::Hyperbolic => Box::new(Hyperbolic::new(
                capacity,
                p("n-sample") as usize,
                p("seed") as u64,
            )),
            PolicyKind::BeladySize => Box::new(BeladySize::new(
                capacity,
                p("n-sample") as usize,
                p("seed") as u64,
            )),
            PolicyKind::Clock2QPlus => Box::new(Clock2QPlus::new(
                capacity,
                p("fifo-size-ratio"),
                p("ghost-size-ratio"),
                p("move-to-main-threshold") as u64,
                p("corr-window-ratio"),
            )),
            PolicyKind::Lirs => Box::new(Lirs::new(capacity)),
            PolicyKind::Lhd => Box::new(Lhd::new(capacity, p("seed") as u64)),
            PolicyKind::Cacheus => Box::new(Cacheus::new(capacity, p("seed") as u64)),
            PolicyKind::ClockPro => Box::new(ClockPro::new(
                capacity,
                p("init-ref") == 1.0,
                p("init-ratio-cold"),
            )),
            PolicyKind::LeCaR => Box::new(LeCaR::new(
                capacity,
                p("update-weight") == 1.0,
                p("lru-weight"),
                p("seed") as u64,
            )),
            PolicyKind::WTinyLfu => Box::new(WTinyLfu::new(capacity, p("window-size"))),
            PolicyKind::Lru => Box::new(Lru::new(capacity)),
            PolicyKind::Fifo => Box::new(Fifo::new(capacity)),
            PolicyKind::Clock { bits } => Box::new(Clock::new(capacity, bits)),
            PolicyKind::Sieve => Box::new(Sieve::new(capacity)),
            PolicyKind::Arc => Box::new(Arc::new(capacity)),
            PolicyKind::Lfu => Box::new(Lfu::new(capacity)),
            PolicyKind::Opt => Box::new(Opt::new(capacity)),
            PolicyKind::Slru { segments } => {
                Box::new(Slru::with_segments(capacity, segments as usize))
            }
            PolicyKind::Size => Box::new(Size::new(capacity)),
            PolicyKind::Lfuda => Box::new(Lfuda::new(capacity)),
            PolicyKind::Gdsf => Box::new(Gdsf::new(capacity)),
        };
        match &self.admission {
            Some(a) => a.wrap(policy),
            None => policy,
        }
    }

    /// Whether the policy needs next-access times.
    pub fn needs_future(&self) -> bool {
        self.kind.needs_future()
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        for (n, v) in &self.params {
            write!(f, ":{n}={v}")?;
        }
        if let Some(a) = &self.admission {
            write!(f, "+{a}")?;
        }
        Ok(())
    }
}

/// A `--policy` argument that does not parse.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error(transparent)]
    Unknown(#[from] UnknownPolicy),
    #[error("{policy}: no parameter {name:?} (it takes: {known})")]
    NoParam {
        policy: String,
        name: String,
        known: String,
    },
    #[error("{policy}: parameter {text:?} is not NAME=VALUE")]
    Malformed { policy: String, text: String },
    #[error("{policy}: {name}={value}: {why}")]
    Value {
        policy: String,
        name: &'static str,
        value: String,
        why: String,
    },
    #[error("admission filter {0}")]
    Admission(String),
    #[error("{0}")]
    Refused(String),
}

/// `NAME[:PARAM=VALUE]…`: the parameters checked against the ranges the
/// policy (or filter) accepts.
pub(crate) fn parse_params(
    owner: &str,
    text: &str,
    defs: &'static [ParamDef],
) -> Result<Vec<(&'static str, f64)>, SpecError> {
    let mut out: Vec<(&'static str, f64)> = Vec::new();
    for item in text.split(':').filter(|s| !s.is_empty()) {
        let Some((name, value)) = item.split_once('=') else {
            return Err(SpecError::Malformed {
                policy: owner.to_string(),
                text: item.to_string(),
            });
        };
        let name = name.trim();
        let Some(def) = defs.iter().find(|d| {
            d.name.eq_ignore_ascii_case(name)
                || d.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        }) else {
            let known = if defs.is_empty() {
                "none".to_string()
            } else {
                defs.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
            };
            return Err(SpecError::NoParam {
                policy: owner.to_string(),
                name: name.to_string(),
                known,
            });
        };
        let bad = |why: String| SpecError::Value {
            policy: owner.to_string(),
            name: def.name,
            value: value.to_string(),
            why,
        };
        let v: f64 = value
            .trim()
            .parse()
            .map_err(|_| bad("not a number".into()))?;
        let low = if def.min_open {
            v > def.min
        } else {
            v >= def.min
        };
        let high = if def.max_open {
            v < def.max
        } else {
            v <= def.max
        };
        if !(low && high) {
            return Err(bad(format!(
                "outside {}{}, {}{} (libCacheSim 0.3.5's range)",
                if def.min_open { "(" } else { "[" },
                def.min,
                def.max,
                if def.max_open { ")" } else { "]" }
            )));
        }
        if def.integer && v.fract() != 0.0 {
            return Err(bad("a whole number is needed".into()));
        }
        if out.iter().any(|(n, _)| *n == def.name) {
            return Err(bad("given twice".into()));
        }
        out.push((def.name, v));
    }
    Ok(out)
}

pub(crate) const fn param(
    name: &'static str,
    aliases: &'static [&'static str],
    default: f64,
    min: f64,
    max: f64,
    integer: bool,
) -> ParamDef {
    ParamDef {
        name,
        aliases,
        default,
        min,
        max,
        integer,
        min_open: false,
        max_open: false,
    }
}

pub(crate) fn default_of(defs: &'static [ParamDef], name: &str) -> f64 {
    defs.iter()
        .find(|d| d.name == name)
        .map(|d| d.default)
        .unwrap_or(0.0)
}

impl FromStr for PolicySpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (policy, admission) = match s.split_once('+') {
            Some((p, a)) => (p, Some(a.parse::<AdmissionSpec>()?)),
            None => (s, None),
        };
        let (name, rest) = policy.split_once(':').unwrap_or((policy, ""));
        let mut kind: PolicyKind = name.trim().parse()?;
        let mut params = parse_params(name, rest, defs(kind))?;
        // Parameters a kind carries become the kind.
        params.retain(|&(n, v)| match (n, &mut kind) {
            ("n-bit-counter", PolicyKind::Clock { bits }) => {
                *bits = v as u8;
                false
            }
            ("n-seg", PolicyKind::Slru { segments }) => {
                *segments = v as u8;
                false
            }
            _ => true,
        });
        // Defaults written out change nothing: one spelling per cache.
        params.retain(|&(n, v)| defs(kind).iter().any(|d| d.name == n && d.default != v));
        Ok(PolicySpec {
            kind,
            params,
            admission,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_under_libcachesim_names_and_short_ones() {
        let s: PolicySpec = "s3fifo:small=0.2:move-to-main-threshold=1".parse().unwrap();
        assert_eq!(s.param("small-size-ratio"), 0.2);
        assert_eq!(s.param("ghost-size-ratio"), 0.9);
        assert_eq!(s.param("move-to-main-threshold"), 1.0);
        assert_eq!(
            s.to_string(),
            "s3fifo:small-size-ratio=0.2:move-to-main-threshold=1"
        );
        let c: PolicySpec = "clock:n-bit-counter=2".parse().unwrap();
        assert_eq!(c.kind, PolicyKind::Clock { bits: 2 });
        assert_eq!(c.to_string(), "clock2");
        let d: PolicySpec = "2q:Ain-size-ratio=0.25".parse().unwrap();
        assert_eq!(d.to_string(), "2q");
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = "lru:x=1".parse::<PolicySpec>().unwrap_err().to_string();
        assert!(e.contains("no parameter \"x\""), "{e}");
        let e = "s3fifo:small=1.5"
            .parse::<PolicySpec>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside (0, 1)"), "{e}");
        let e = "mq:n-queue=2.5"
            .parse::<PolicySpec>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("whole number"), "{e}");
        let e = "mq:lifetime".parse::<PolicySpec>().unwrap_err().to_string();
        assert!(e.contains("NAME=VALUE"), "{e}");
    }
}
