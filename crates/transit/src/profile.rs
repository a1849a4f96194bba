//! Machine profiles: the measured points that fix f(k) and g(x) for one machine, in a TOML file whose format
//! `PROFILES.md` documents. Four are built in (the paper's GPUs); `lockstep transit probe` writes one for the
//! CPU it runs on.

use std::fmt::{self, Write as _};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::Model;

/// The format version this crate reads and writes.
pub const FORMAT: u32 = 1;

/// What one instruction of the profile's CS throughput counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InstructionKind {
    /// One instruction of one thread (a warp instruction with 32 active lanes counts 32).
    Thread,
    /// One instruction issued by a warp.
    Warp,
}

impl InstructionKind {
    pub fn name(self) -> &'static str {
        match self {
            InstructionKind::Thread => "thread",
            InstructionKind::Warp => "warp",
        }
    }
}

/// A machine profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Format version; must be 1.
    pub format: u32,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Where the numbers come from (a paper, a probe run).
    #[serde(default)]
    pub source: String,
    /// How many identical units the machine has; every number below is per unit (per SM for the GPUs).
    #[serde(default = "one")]
    pub units: u32,
    /// What a unit is called in reports ("SM", "CPU").
    #[serde(default = "unit_name")]
    pub unit_name: String,
    /// Threads one unit keeps resident at most; a workload's n is capped here.
    pub max_threads: f64,
    pub cs: ComputeSystem,
    pub ms: MemorySystem,
    /// Free-form notes (the probe records what it measured and how).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn one() -> u32 {
    1
}

fn unit_name() -> String {
    "unit".into()
}

/// The computation system: the CS transition point π.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeSystem {
    /// M: threads at which CS throughput stops growing (π's abscissa).
    pub lanes: f64,
    /// CS throughput from π on, in 10⁹ instructions per second per unit.
    pub peak_ginstr_per_s: f64,
    /// What an instruction counts.
    #[serde(default = "thread_kind")]
    pub instruction: InstructionKind,
    /// Measured points of CS throughput against threads (informational: the probe records them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curve: Vec<ComputePoint>,
}

fn thread_kind() -> InstructionKind {
    InstructionKind::Thread
}

/// The memory system: the MS transition point δ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySystem {
    /// R: peak MS throughput, 10⁹ bytes per second per unit.
    pub peak_gb_per_s: f64,
    /// δ's abscissa: threads in the MS at which its throughput saturates. When absent it is derived from
    /// `latency_ns` by Little's law (knee = R · L / request_bytes).
    #[serde(default)]
    pub knee_threads: Option<f64>,
    /// Average latency of one request, nanoseconds (informational when `knee_threads` is given).
    #[serde(default)]
    pub latency_ns: Option<f64>,
    /// Bytes of one memory request (Z counts instructions per request of this size).
    pub request_bytes: f64,
    /// Measured points of MS throughput against threads (drawn on the figure when present).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curve: Vec<MemoryPoint>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryPoint {
    pub threads: f64,
    pub gb_per_s: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputePoint {
    pub threads: f64,
    pub ginstr_per_s: f64,
}

/// A profile that cannot be read or makes no sense: names the file and the line or field.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileError {
    pub file: String,
    pub message: String,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for ProfileError {}

/// The built-in profiles: name and TOML text.
pub const BUILTIN: &[(&str, &str)] =
    &[("c2075-sp", C2075_SP), ("c2075-dp", C2075_DP), ("gtx690-sp", GTX690_SP), ("gtx690-dp", GTX690_DP)];

const PAPER: &str = "transit model paper, section 3: measured transition points per SM";

macro_rules! gpu_profile {
    ($name:literal, $desc:literal, $units:literal, $max:literal, $lanes:literal, $cs:literal, $ms:literal, $knee:literal, $bytes:literal) => {
        concat!(
            "# Built-in profile. Numbers are per SM; the fields are described in crates/transit/PROFILES.md.\n",
            "format = 1\n",
            "name = \"",
            $name,
            "\"\n",
            "description = \"",
            $desc,
            "\"\n",
            "source = \"transit model paper, section 3: measured transition points per SM\"\n",
            "units = ",
            $units,
            "\n",
            "unit_name = \"SM\"\n",
            "max_threads = ",
            $max,
            "\n\n[cs]\nlanes = ",
            $lanes,
            "\npeak_ginstr_per_s = ",
            $cs,
            "\ninstruction = \"thread\"\n\n[ms]\npeak_gb_per_s = ",
            $ms,
            "\nknee_threads = ",
            $knee,
            "\nrequest_bytes = ",
            $bytes,
            "   # one thread's access: the word size\n"
        )
    };
}

const C2075_SP: &str =
    gpu_profile!("c2075-sp", "NVIDIA Tesla C2075 (Fermi), single precision", 14, 1536, 576, 24.8, 8.93, 1536, 4);
const C2075_DP: &str =
    gpu_profile!("c2075-dp", "NVIDIA Tesla C2075 (Fermi), double precision", 14, 1536, 384, 14.0, 9.29, 768, 8);
const GTX690_SP: &str = gpu_profile!(
    "gtx690-sp",
    "NVIDIA GeForce GTX 690 (Kepler), single precision, one of its two GK104 GPUs",
    8,
    2048,
    2048,
    80.0,
    16.25,
    2048,
    4
);
const GTX690_DP: &str = gpu_profile!(
    "gtx690-dp",
    "NVIDIA GeForce GTX 690 (Kepler), double precision, one of its two GK104 GPUs",
    8,
    2048,
    384,
    8.0,
    18.86,
    1024,
    8
);

/// The machine's side of the normalized model: what turns profile units into the model's cycles and
/// requests, and back.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Scale {
    /// Instructions per second one lane retires (the model's cycle is its inverse).
    pub lane_rate: f64,
    /// Bytes per request.
    pub request_bytes: f64,
    pub units: u32,
}

impl Scale {
    /// Requests per cycle → bytes per second (per unit).
    pub fn bytes_per_s(&self, requests_per_cycle: f64) -> f64 {
        requests_per_cycle * self.lane_rate * self.request_bytes
    }

    /// Instructions per cycle → instructions per second (per unit).
    pub fn instr_per_s(&self, instr_per_cycle: f64) -> f64 {
        instr_per_cycle * self.lane_rate
    }

    /// Bytes per second (per unit) → requests per cycle.
    pub fn requests_per_cycle(&self, bytes_per_s: f64) -> f64 {
        bytes_per_s / (self.lane_rate * self.request_bytes)
    }

    /// Cycles → seconds.
    pub fn seconds(&self, cycles: f64) -> f64 {
        cycles / self.lane_rate
    }
}

impl Profile {
    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Option<Profile> {
        BUILTIN.iter().find(|(n, _)| *n == name).map(|(n, text)| {
            // The built-ins are checked by the tests; a failure here is a bug, reported as such.
            Profile::parse(text, &format!("built-in profile {n}")).unwrap_or_else(|e| panic!("{e}"))
        })
    }

    /// Names of the built-in profiles.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// Reads a profile: `spec` is a built-in name, or a path to a TOML file.
    pub fn load(spec: &str) -> Result<Profile, ProfileError> {
        let path = Path::new(spec);
        if !path.exists() {
            if let Some(p) = Profile::builtin(spec) {
                return Ok(p);
            }
            let looks_like_file = spec.contains('/') || spec.ends_with(".toml");
            let message = if looks_like_file {
                "no such file".to_string()
            } else {
                format!(
                    "not a built-in machine ({}) and no such file; `lockstep transit probe -o {spec}.toml` measures \
                     this CPU",
                    Profile::builtin_names().join(", ")
                )
            };
            return Err(ProfileError { file: spec.into(), message });
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| ProfileError { file: spec.into(), message: format!("cannot read: {e}") })?;
        Profile::parse(&text, spec)
    }

    /// Parses and checks a profile; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Profile, ProfileError> {
        let err = |message: String| ProfileError { file: file.into(), message };
        let p: Profile = toml::from_str(text).map_err(|e| err(one_line(&e.to_string())))?;
        p.check().map_err(err)?;
        Ok(p)
    }

    /// Checks the values; the message names the field.
    pub fn check(&self) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!("field `format`: this lockstep reads format {FORMAT}, the file has {}", self.format));
        }
        if self.name.trim().is_empty() {
            return Err("field `name`: must not be empty".into());
        }
        if self.units == 0 {
            return Err("field `units`: must be at least 1".into());
        }
        let positive = |field: &str, v: f64| -> Result<(), String> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("field `{field}`: must be a positive number (got {v})"))
            }
        };
        positive("max_threads", self.max_threads)?;
        positive("cs.lanes", self.cs.lanes)?;
        positive("cs.peak_ginstr_per_s", self.cs.peak_ginstr_per_s)?;
        positive("ms.peak_gb_per_s", self.ms.peak_gb_per_s)?;
        positive("ms.request_bytes", self.ms.request_bytes)?;
        if let Some(k) = self.ms.knee_threads {
            positive("ms.knee_threads", k)?;
        }
        if let Some(l) = self.ms.latency_ns {
            positive("ms.latency_ns", l)?;
        }
        if self.ms.knee_threads.is_none() && self.ms.latency_ns.is_none() {
            return Err("table `ms`: give `knee_threads` (δ) or `latency_ns` (the knee is then derived)".into());
        }
        for (i, pt) in self.ms.curve.iter().enumerate() {
            positive(&format!("ms.curve[{i}].threads"), pt.threads)?;
            if !(pt.gb_per_s.is_finite() && pt.gb_per_s >= 0.0) {
                return Err(format!("field `ms.curve[{i}].gb_per_s`: must be a non-negative number"));
            }
        }
        for (i, pt) in self.cs.curve.iter().enumerate() {
            positive(&format!("cs.curve[{i}].threads"), pt.threads)?;
            if !(pt.ginstr_per_s.is_finite() && pt.ginstr_per_s >= 0.0) {
                return Err(format!("field `cs.curve[{i}].ginstr_per_s`: must be a non-negative number"));
            }
        }
        Ok(())
    }

    /// δ's abscissa: the knee, given or derived from the latency.
    pub fn knee_threads(&self) -> f64 {
        match (self.ms.knee_threads, self.ms.latency_ns) {
            (Some(k), _) => k,
            (None, Some(l)) => self.ms.peak_gb_per_s * l / self.ms.request_bytes,
            (None, None) => 1.0,
        }
    }

    /// The scale between the model's units and the profile's.
    pub fn scale(&self) -> Scale {
        Scale {
            lane_rate: self.cs.peak_ginstr_per_s * 1e9 / self.cs.lanes,
            request_bytes: self.ms.request_bytes,
            units: self.units,
        }
    }

    /// The normalized model for a workload of intensity `z` (instructions of the profile's kind per request of
    /// `request_bytes`) with `n` threads per unit.
    pub fn model(&self, z: f64, n: f64) -> Model {
        let s = self.scale();
        let r = s.requests_per_cycle(self.ms.peak_gb_per_s * 1e9);
        Model { m: self.cs.lanes, r, l: self.knee_threads() / r, z, n }
    }

    /// Latency implied by the knee (Little's law), nanoseconds: the slope of f(k).
    pub fn effective_latency_ns(&self) -> f64 {
        self.knee_threads() * self.ms.request_bytes / self.ms.peak_gb_per_s
    }

    /// The profile as TOML, with comments, in the documented format.
    pub fn to_toml(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "# lockstep transit machine profile (format described in crates/transit/PROFILES.md).");
        let _ = writeln!(o, "# All numbers are per unit; 1 GB = 1e9 bytes, 1 Ginstr = 1e9 instructions.");
        let _ = writeln!(o, "format = {}", self.format);
        let _ = writeln!(o, "name = {}", toml_str(&self.name));
        let _ = writeln!(o, "description = {}", toml_str(&self.description));
        let _ = writeln!(o, "source = {}", toml_str(&self.source));
        let _ = writeln!(o, "units = {}", self.units);
        let _ = writeln!(o, "unit_name = {}", toml_str(&self.unit_name));
        let _ = writeln!(o, "max_threads = {}   # resident threads per unit at most", num(self.max_threads));
        if !self.notes.is_empty() {
            let _ = writeln!(o, "notes = [");
            for n in &self.notes {
                let _ = writeln!(o, "  {},", toml_str(n));
            }
            let _ = writeln!(o, "]");
        }
        let _ = writeln!(o, "\n[cs]   # computation system: transition point pi = (lanes, peak)");
        let _ = writeln!(o, "lanes = {}", num(self.cs.lanes));
        let _ = writeln!(o, "peak_ginstr_per_s = {}", num(self.cs.peak_ginstr_per_s));
        let _ = writeln!(o, "instruction = {}", toml_str(self.cs.instruction.name()));
        let _ = writeln!(o, "\n[ms]   # memory system: transition point delta = (knee_threads, peak)");
        let _ = writeln!(o, "peak_gb_per_s = {}", num(self.ms.peak_gb_per_s));
        if let Some(k) = self.ms.knee_threads {
            let _ = writeln!(o, "knee_threads = {}", num(k));
        }
        if let Some(l) = self.ms.latency_ns {
            let _ = writeln!(o, "latency_ns = {}", num(l));
        }
        let _ = writeln!(o, "request_bytes = {}", num(self.ms.request_bytes));
        for pt in &self.ms.curve {
            let _ = writeln!(o, "\n[[ms.curve]]\nthreads = {}\ngb_per_s = {}", num(pt.threads), num(pt.gb_per_s));
        }
        for pt in &self.cs.curve {
            let _ =
                writeln!(o, "\n[[cs.curve]]\nthreads = {}\nginstr_per_s = {}", num(pt.threads), num(pt.ginstr_per_s));
        }
        o
    }
}

/// A TOML float or integer that reads back as the same f64.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

fn toml_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04X}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// toml's messages span several lines (with a caret under the spot); keep them, but indent the rest.
fn one_line(message: &str) -> String {
    message.trim_end().replace('\n', "\n    ")
}

/// The source line the built-in profiles carry.
pub fn paper_source() -> &'static str {
    PAPER
}
