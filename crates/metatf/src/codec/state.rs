//! What metadata records change as a Meta-TF trace goes on: a field's
//! width and interpretation for one record type in one section, previous
//! values for delta and stride, and the current section. The decoder and
//! the encoder keep one each and must agree.

use std::collections::HashMap;

use crate::check::Interp;
use crate::plan::{Op, Plan, Step, StepWidth};

use super::MetaError;

/// Encoding in effect for one field, after metadata.
#[derive(Clone, Debug)]
struct FieldState {
    width: Option<u32>,
    interp: Interp,
}

/// Widths, interpretations and previous values that metadata and records
/// change as the trace goes on; shared by reader and writer.
#[derive(Default)]
pub(super) struct Live {
    pub(super) section: u8,
    overrides: HashMap<(u8, u64, usize), FieldState>,
    /// Previous values by (section, name id): `prev[section * names + id]`.
    prev: Vec<Option<u64>>,
    names: usize,
}

impl Live {
    /// Whether no metadata is in effect: every field as its DTD declares it.
    #[inline(always)]
    pub(super) fn plain(&self) -> bool {
        self.overrides.is_empty()
    }

    pub(super) fn new(names: usize) -> Live {
        Live {
            names,
            prev: vec![None; 256 * names.max(1)],
            ..Live::default()
        }
    }

    pub(super) fn get_prev(&self, id: usize) -> Option<u64> {
        self.prev[self.section as usize * self.names + id]
    }

    pub(super) fn set_prev(&mut self, id: usize, v: u64) {
        let i = self.section as usize * self.names + id;
        self.prev[i] = Some(v);
    }

    pub(super) fn state(&self, rec_tag: u64, s: &Step) -> (Option<u32>, Interp) {
        let found = if self.overrides.is_empty() {
            None
        } else {
            self.overrides.get(&(self.section, rec_tag, s.pos))
        };
        match found {
            Some(f) => (f.width, f.interp.clone()),
            None => (
                match s.width {
                    StepWidth::Bytes(n) => Some(n),
                    StepWidth::Of(_) => None,
                },
                s.interp.clone(),
            ),
        }
    }

    pub(super) fn apply_metadata(
        &mut self,
        plan: &Plan,
        tag: u64,
        field: u64,
        property: u64,
        values: &[u64],
    ) -> Result<(), MetaError> {
        let bad = |why: &str| MetaError::Metadata {
            tag,
            field,
            property,
            why: why.into(),
        };
        let r = plan
            .record(self.section, tag)
            .ok_or_else(|| bad("no such record in this section"))?;
        let rp = &plan.records[r];
        let step = find_step(&rp.ops, field as usize).ok_or_else(|| bad("no such field"))?;
        let key = (self.section, tag, field as usize);
        let cur = self.overrides.get(&key).cloned().unwrap_or(FieldState {
            width: match step.width {
                StepWidth::Bytes(n) => Some(n),
                StepWidth::Of(_) => None,
            },
            interp: step.interp.clone(),
        });
        let v = |i: usize| values.get(i).copied().ok_or_else(|| bad("missing value"));
        let next = match property {
            0 => FieldState {
                width: Some(v(0)? as u32),
                interp: cur.interp,
            },
            1 => FieldState {
                width: cur.width,
                interp: Interp::None,
            },
            2 => FieldState {
                width: cur.width,
                interp: Interp::BaseOffset(v(0)?),
            },
            3 => {
                self.set_prev(step.name_id, v(0)?);
                FieldState {
                    width: cur.width,
                    interp: Interp::Delta(v(0)?),
                }
            }
            4 => FieldState {
                width: Some(0),
                interp: Interp::Default(v(0)?),
            },
            6 => {
                self.set_prev(step.name_id, v(0)?);
                FieldState {
                    width: Some(0),
                    interp: Interp::Stride {
                        initial: v(0)?,
                        stride: v(1)? as u32 as i32 as i64,
                    },
                }
            }
            5 | 7 => {
                return Err(bad(
                    "section interpretations are not supported by this reader yet",
                ));
            }
            _ => return Err(bad("unknown property code")),
        };
        self.overrides.insert(key, next);
        Ok(())
    }
}

fn find_step(ops: &[Op], pos: usize) -> Option<&Step> {
    for op in ops {
        match op {
            Op::Field(s) if s.pos == pos => return Some(s),
            Op::Field(_) => {}
            Op::Repeat { body, .. } => {
                if let Some(s) = find_step(body, pos) {
                    return Some(s);
                }
            }
        }
    }
    None
}

/// Number of metadata values that follow, by property code.
pub(super) fn metadata_values(property: u64) -> usize {
    match property {
        1 => 0,
        6 | 7 => 2,
        _ => 1,
    }
}

pub(super) fn sext(v: u64, n: u32) -> u64 {
    if n == 0 || n >= 8 {
        return v;
    }
    let s = 64 - 8 * n;
    (((v << s) as i64) >> s) as u64
}
