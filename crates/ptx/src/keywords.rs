//! The PTX vocabulary: opcodes, instruction modifiers, scalar types, state spaces and special registers.
//!
//! Each table is written once; the macro derives the enum, its spelling (`as_str`, `Display`) and the lookup
//! from text (`from_name`), so the parser and both printers (AST and IR) agree by construction.

use std::fmt;

macro_rules! keywords {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant,)* }

        impl $name {
            /// Every keyword of this table, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The keyword as written in PTX (without a leading dot).
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            /// Looks a keyword up by its spelling (without a leading dot).
            pub fn from_name(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

keywords! {
    /// An instruction opcode: the word before the first dot (`add` in `add.s32`).
    Opcode {
        Abs = "abs", Activemask = "activemask", Add = "add", Addc = "addc", Alloca = "alloca", And = "and",
        Applypriority = "applypriority", Atom = "atom", Bar = "bar", Barrier = "barrier", Bfe = "bfe",
        Bfi = "bfi", Bfind = "bfind", Bmsk = "bmsk", Bra = "bra", Brev = "brev", Brkpt = "brkpt", Brx = "brx",
        Call = "call", Clusterlaunchcontrol = "clusterlaunchcontrol", Clz = "clz", Cnot = "cnot",
        Copysign = "copysign", Cos = "cos", Cp = "cp", Createpolicy = "createpolicy", Cvt = "cvt", Cvta = "cvta",
        Discard = "discard", Div = "div", Dp2a = "dp2a", Dp4a = "dp4a", Elect = "elect", Ex2 = "ex2",
        Exit = "exit", Fence = "fence", Fma = "fma", Fns = "fns", Getctarank = "getctarank",
        Griddepcontrol = "griddepcontrol", Isspacep = "isspacep", Istypep = "istypep", Ld = "ld",
        Ldmatrix = "ldmatrix", Ldu = "ldu", Lg2 = "lg2", Lop3 = "lop3", Mad = "mad", Mad24 = "mad24",
        Madc = "madc", Mapa = "mapa", Match = "match", Max = "max", Mbarrier = "mbarrier", Membar = "membar",
        Min = "min", Mma = "mma", Mov = "mov", Movmatrix = "movmatrix", Mul = "mul", Mul24 = "mul24",
        Multimem = "multimem", Nanosleep = "nanosleep", Neg = "neg", Not = "not", Or = "or",
        Pmevent = "pmevent", Popc = "popc", Prefetch = "prefetch", Prefetchu = "prefetchu", Prmt = "prmt",
        Rcp = "rcp", Red = "red", Redux = "redux", Rem = "rem", Ret = "ret", Rsqrt = "rsqrt", Sad = "sad",
        Selp = "selp", Set = "set", Setmaxnreg = "setmaxnreg", Setp = "setp", Shf = "shf", Shfl = "shfl",
        Shl = "shl", Shr = "shr", Sin = "sin", Slct = "slct", Sqrt = "sqrt", St = "st",
        Stackrestore = "stackrestore", Stacksave = "stacksave", Stmatrix = "stmatrix", Sub = "sub",
        Subc = "subc", Suld = "suld", Suq = "suq", Sured = "sured", Sust = "sust", Szext = "szext",
        Tanh = "tanh", Tcgen05 = "tcgen05", Tensormap = "tensormap", Testp = "testp", Tex = "tex", Tld4 = "tld4",
        Trap = "trap", Txq = "txq", Vabsdiff = "vabsdiff", Vabsdiff2 = "vabsdiff2", Vabsdiff4 = "vabsdiff4",
        Vadd = "vadd", Vadd2 = "vadd2", Vadd4 = "vadd4", Vavrg2 = "vavrg2", Vavrg4 = "vavrg4", Vmad = "vmad",
        Vmax = "vmax", Vmax2 = "vmax2", Vmax4 = "vmax4", Vmin = "vmin", Vmin2 = "vmin2", Vmin4 = "vmin4",
        Vote = "vote", Vset = "vset", Vset2 = "vset2", Vset4 = "vset4", Vshl = "vshl", Vshr = "vshr",
        Vsub = "vsub", Vsub2 = "vsub2", Vsub4 = "vsub4", Wgmma = "wgmma", Wmma = "wmma", Xor = "xor",
    }
}

keywords! {
    /// A scalar (element) type. `.pred` and the opaque texture types are included.
    ScalarType {
        B8 = "b8", B16 = "b16", B32 = "b32", B64 = "b64", B128 = "b128",
        U8 = "u8", U16 = "u16", U32 = "u32", U64 = "u64",
        S8 = "s8", S16 = "s16", S32 = "s32", S64 = "s64",
        F16 = "f16", F16x2 = "f16x2", Bf16 = "bf16", Bf16x2 = "bf16x2", F32 = "f32", F64 = "f64",
        Tf32 = "tf32", E4m3 = "e4m3", E5m2 = "e5m2", E4m3x2 = "e4m3x2", E5m2x2 = "e5m2x2",
        E2m1 = "e2m1", E2m1x2 = "e2m1x2", E3m2 = "e3m2", E3m2x2 = "e3m2x2", E2m3 = "e2m3", E2m3x2 = "e2m3x2",
        Ue8m0 = "ue8m0", Ue8m0x2 = "ue8m0x2", S4 = "s4", U4 = "u4", S2 = "s2", U2 = "u2", B1 = "b1",
        S16x2 = "s16x2", U16x2 = "u16x2",
        Pred = "pred", Texref = "texref", Samplerref = "samplerref", Surfref = "surfref",
    }
}

impl ScalarType {
    /// Size in bytes of one element (`.pred` counts as 1 byte in memory layouts; sub-byte types round up).
    pub fn size(self) -> u32 {
        use ScalarType::*;
        match self {
            B8 | U8 | S8 | Pred | E4m3 | E5m2 | E2m1 | E3m2 | E2m3 | Ue8m0 | S4 | U4 | S2 | U2 | B1 | E2m1x2 => 1,
            B16 | U16 | S16 | F16 | Bf16 | E4m3x2 | E5m2x2 | E3m2x2 | E2m3x2 | Ue8m0x2 => 2,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 | Tf32 | S16x2 | U16x2 => 4,
            B64 | U64 | S64 | F64 | Texref | Samplerref | Surfref => 8,
            B128 => 16,
        }
    }

    pub fn is_float(self) -> bool {
        use ScalarType::*;
        matches!(self, F16 | F16x2 | Bf16 | Bf16x2 | F32 | F64 | Tf32)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64)
    }
}

keywords! {
    /// A state space. `.shared::cta` and `.shared::cluster` are distinct from plain `.shared` only in spelling
    /// and scope; later stages treat `SharedCta` like `Shared`.
    StateSpace {
        Reg = "reg", Sreg = "sreg", Const = "const", Global = "global", Local = "local", Param = "param",
        Shared = "shared", SharedCta = "shared::cta", SharedCluster = "shared::cluster", Tex = "tex",
        ParamEntry = "param::entry", ParamFunc = "param::func",
    }
}

keywords! {
    /// A special (read-only, predefined) register, without its `%`.
    SpecialReg {
        Tid = "tid", Ntid = "ntid", Laneid = "laneid", Warpid = "warpid", Nwarpid = "nwarpid",
        Ctaid = "ctaid", Nctaid = "nctaid", Smid = "smid", Nsmid = "nsmid", Gridid = "gridid",
        IsExplicitCluster = "is_explicit_cluster", Clusterid = "clusterid", Nclusterid = "nclusterid",
        ClusterCtaid = "cluster_ctaid", ClusterNctaid = "cluster_nctaid", ClusterCtarank = "cluster_ctarank",
        ClusterNctarank = "cluster_nctarank",
        LanemaskEq = "lanemask_eq", LanemaskLe = "lanemask_le", LanemaskLt = "lanemask_lt",
        LanemaskGe = "lanemask_ge", LanemaskGt = "lanemask_gt",
        Clock = "clock", ClockHi = "clock_hi", Clock64 = "clock64", Globaltimer = "globaltimer",
        GlobaltimerLo = "globaltimer_lo", GlobaltimerHi = "globaltimer_hi",
        Pm0 = "pm0", Pm1 = "pm1", Pm2 = "pm2", Pm3 = "pm3", Pm4 = "pm4", Pm5 = "pm5", Pm6 = "pm6", Pm7 = "pm7",
        Pm0_64 = "pm0_64", Pm1_64 = "pm1_64", Pm2_64 = "pm2_64", Pm3_64 = "pm3_64", Pm4_64 = "pm4_64",
        Pm5_64 = "pm5_64", Pm6_64 = "pm6_64", Pm7_64 = "pm7_64",
        Envreg0 = "envreg0", Envreg1 = "envreg1", Envreg2 = "envreg2", Envreg3 = "envreg3",
        Envreg4 = "envreg4", Envreg5 = "envreg5", Envreg6 = "envreg6", Envreg7 = "envreg7",
        Envreg8 = "envreg8", Envreg9 = "envreg9", Envreg10 = "envreg10", Envreg11 = "envreg11",
        Envreg12 = "envreg12", Envreg13 = "envreg13", Envreg14 = "envreg14", Envreg15 = "envreg15",
        Envreg16 = "envreg16", Envreg17 = "envreg17", Envreg18 = "envreg18", Envreg19 = "envreg19",
        Envreg20 = "envreg20", Envreg21 = "envreg21", Envreg22 = "envreg22", Envreg23 = "envreg23",
        Envreg24 = "envreg24", Envreg25 = "envreg25", Envreg26 = "envreg26", Envreg27 = "envreg27",
        Envreg28 = "envreg28", Envreg29 = "envreg29", Envreg30 = "envreg30", Envreg31 = "envreg31",
        ReservedSmemOffsetBegin = "reserved_smem_offset_begin", ReservedSmemOffsetEnd = "reserved_smem_offset_end",
        ReservedSmemOffsetCap = "reserved_smem_offset_cap", ReservedSmemOffset0 = "reserved_smem_offset_0",
        ReservedSmemOffset1 = "reserved_smem_offset_1",
        TotalSmemSize = "total_smem_size", AggrSmemSize = "aggr_smem_size", DynamicSmemSize = "dynamic_smem_size",
        CurrentGraphExec = "current_graph_exec",
    }
}

// The instruction modifier table. Types, state spaces and vector widths are modifiers too (wrapped in
// `Modifier::Type`, `Modifier::Space`, `Modifier::Vector`); the table below holds all the other words.
keywords! {
    /// A modifier word that is not a type, state space, vector width or shape.
    Word {
        // rounding
        Rn = "rn", Rz = "rz", Rm = "rm", Rp = "rp", Rna = "rna", Rs = "rs",
        Rni = "rni", Rzi = "rzi", Rmi = "rmi", Rpi = "rpi",
        // floating-point behaviour
        Ftz = "ftz", Sat = "sat", Satfinite = "satfinite", Approx = "approx", Full = "full", Relu = "relu",
        NaN = "NaN", Xorsign = "xorsign", Abs = "abs", Oob = "oob",
        // comparisons
        Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge", Lo = "lo", Ls = "ls", Hi = "hi",
        Hs = "hs", Equ = "equ", Neu = "neu", Ltu = "ltu", Leu = "leu", Gtu = "gtu", Geu = "geu", Num = "num",
        Nan = "nan",
        // boolean and atomic operations
        And = "and", Or = "or", Xor = "xor", Add = "add", Inc = "inc", Dec = "dec", Cas = "cas", Exch = "exch",
        Min = "min", Max = "max", Sub = "sub",
        // integer multiply and carry
        Wide = "wide", Cc = "cc",
        // memory: cache operators, eviction priorities, ordering and scope
        Ca = "ca", Cg = "cg", Cs = "cs", Lu = "lu", Cv = "cv", Wb = "wb", Wt = "wt", Nc = "nc",
        L1EvictNormal = "L1::evict_normal", L1EvictUnchanged = "L1::evict_unchanged",
        L1EvictFirst = "L1::evict_first", L1EvictLast = "L1::evict_last", L1NoAllocate = "L1::no_allocate",
        L2EvictNormal = "L2::evict_normal", L2EvictFirst = "L2::evict_first", L2EvictLast = "L2::evict_last",
        L2EvictUnchanged = "L2::evict_unchanged",
        L2CacheHint = "L2::cache_hint", L2_64B = "L2::64B", L2_128B = "L2::128B", L2_256B = "L2::256B",
        L1 = "L1", L2 = "L2", LevelEvictionPriority = "level::eviction_priority",
        LevelPrefetchSize = "level::prefetch_size",
        Weak = "weak", Relaxed = "relaxed", Acquire = "acquire", Release = "release", AcqRel = "acq_rel",
        Sc = "sc", Mmio = "mmio", Volatile = "volatile",
        Cta = "cta", Cluster = "cluster", Gpu = "gpu", Sys = "sys", Gl = "gl",
        ProxyAlias = "proxy::alias", ProxyAsync = "proxy::async", ProxyAsyncGlobal = "proxy::async::global",
        ProxyAsyncShared = "proxy::async::shared::cta", ProxyTensormap = "proxy::tensormap",
        ProxyGeneric = "proxy::generic", Proxy = "proxy", Async = "async", MbarrierInit = "mbarrier_init",
        // synchronization and warp-level operations
        Sync = "sync", Aligned = "aligned", Uni = "uni", Arrive = "arrive", Red = "red", Popc = "popc",
        All = "all", Any = "any", Ballot = "ballot", Up = "up", Down = "down", Bfly = "bfly", Idx = "idx",
        Warp = "warp",
        // conversions and addressing
        To = "to", Pack = "pack",
        // bit manipulation
        Shiftamt = "shiftamt", Clamp = "clamp", Wrap = "wrap", L = "l", R = "r",
        // scalar video: vmad's plus-one mode and scaling
        Po = "po", Shr7 = "shr7", Shr15 = "shr15",
        F4e = "f4e", B4e = "b4e", Rc8 = "rc8", Ecl = "ecl", Ecr = "ecr", Rc16 = "rc16",
        // testp
        Finite = "finite", Infinite = "infinite", Number = "number", Notanumber = "notanumber",
        Normal = "normal", Subnormal = "subnormal",
        // texture and surface
        D1 = "1d", D2 = "2d", D3 = "3d", D4 = "4d", D5 = "5d", A1d = "a1d", A2d = "a2d", Cube = "cube", Acube = "acube",
        D2ms = "2dms", A2dms = "a2dms", Level = "level", Grad = "grad", Base = "base", B = "b", P = "p",
        Trap = "trap", Zero = "zero", Width = "width", Height = "height", Depth = "depth",
        ChannelDataType = "channel_data_type", ChannelOrder = "channel_order",
        NormalizedCoords = "normalized_coords", FilterMode = "filter_mode", AddrMode0 = "addr_mode_0",
        AddrMode1 = "addr_mode_1", AddrMode2 = "addr_mode_2", ArraySize = "array_size",
        NumMipmapLevels = "num_mipmap_levels", NumSamples = "num_samples",
        ForceUnnormalizedCoords = "force_unnormalized_coords",
        // matrix (wmma / mma / ldmatrix / wgmma)
        Load = "load", Store = "store", A = "a", C = "c", D = "d", Row = "row", Col = "col", Trans = "trans",
        X1 = "x1", X2 = "x2", X4 = "x4", MmaAsync = "mma_async", CommitGroup = "commit_group",
        WaitGroup = "wait_group", Fence = "fence", SpOrderedMetadata = "sp::ordered_metadata", Sp = "sp",
        Kind = "kind", KindF8f6f4 = "kind::f8f6f4",
        // cp.async and bulk copies
        Bulk = "bulk", Tensor = "tensor",
        MbarrierCompleteTxBytes = "mbarrier::complete_tx::bytes", BulkGroup = "bulk_group",
        Tile = "tile", Im2col = "im2col", Multicast = "multicast::cluster", Prefetch = "prefetch",
        // mbarrier
        Init = "init", ArriveDrop = "arrive_drop", ExpectTx = "expect_tx", CompleteTx = "complete_tx",
        TestWait = "test_wait", TryWait = "try_wait", PendingCount = "pending_count", Parity = "parity",
        NoComplete = "noComplete", Inval = "inval", Mbarrier = "mbarrier",
        // miscellaneous
        Fractional = "fractional", Range = "range", Cvt = "cvt", LaunchDependents = "launch_dependents", Wait = "wait",
        Tensormap = "tensormap", Replace = "replace", Cp = "cp", Fenceproxy = "fenceproxy",
        CpFenceproxy = "cp_fenceproxy", B1024 = "b1024",
        Ignore = "ignore", Try = "try", Query = "query", IsCanceled = "is_canceled",
        GetFirstCtaid = "get_first_ctaid",
        // added with the parser: words that nvcc/clang output and the PTX ISA (up to 9.x) use
        Mma = "mma", G = "g", Noftz = "noftz", Read = "read", WaitAll = "wait_all", Noinc = "noinc", Mask = "mask",
        Reduce = "reduce", LdReduce = "ld_reduce", St = "st", Ld = "ld",
        TryCancel = "try_cancel", QueryCancel = "query_cancel",
        AsyncGeneric = "async::generic", TensormapGeneric = "tensormap::generic",
        SyncRestrictSharedCluster = "sync_restrict::shared::cluster",
        SyncRestrictSharedCta = "sync_restrict::shared::cta", OpRestrictRelease = "op_restrict::release",
        TileGather4 = "tile::gather4", TileScatter4 = "tile::scatter4", Im2colW = "im2col::w",
        Im2colW128 = "im2col::w::128", Im2colNoOffs = "im2col_no_offs",
        X8 = "x8", X16 = "x16", X32 = "x32", X64 = "x64", X128 = "x128",
        GlobalAddress = "global_address", Rank = "rank", BoxDim = "box_dim", GlobalDim = "global_dim",
        GlobalStride = "global_stride", ElementStride = "element_stride", Elemtype = "elemtype",
        InterleaveLayout = "interleave_layout", SwizzleMode = "swizzle_mode",
        SwizzleAtomicity = "swizzle_atomicity", FillMode = "fill_mode",
        Alloc = "alloc", Dealloc = "dealloc", RelinquishAllocPermit = "relinquish_alloc_permit",
        Commit = "commit", Shift = "shift", WaitLd = "wait::ld", WaitSt = "wait::st",
        CtaGroup1 = "cta_group::1", CtaGroup2 = "cta_group::2", KindTf32 = "kind::tf32", KindF16 = "kind::f16",
        KindI8 = "kind::i8", KindMxf8f6f4 = "kind::mxf8f6f4", KindMxf4 = "kind::mxf4",
        KindMxf4nvf4 = "kind::mxf4nvf4", Pack16b = "pack::16b", Unpack16b = "unpack::16b",
        Shape16x64b = "16x64b", Shape16x128b = "16x128b", Shape16x256b = "16x256b", Shape32x32b = "32x32b",
        Shape16x32bx2 = "16x32bx2", BlockScale = "block_scale", ScaleVec1x = "scale_vec::1X",
        ScaleVec2x = "scale_vec::2X", ScaleVec4x = "scale_vec::4X",
    }
}

/// A matrix shape such as `m16n8k16` (or `m8n8` for `ldmatrix`, where `k` is absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub m: u16,
    pub n: u16,
    pub k: Option<u16>,
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}n{}", self.m, self.n)?;
        if let Some(k) = self.k {
            write!(f, "k{k}")?;
        }
        Ok(())
    }
}

/// One `.word` after an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Modifier {
    Type(ScalarType),
    Space(StateSpace),
    /// `.v2`, `.v4`, `.v8`
    Vector(u8),
    Shape(Shape),
    Word(Word),
}

impl Modifier {
    /// Looks a modifier up by its spelling (without the leading dot).
    pub fn from_name(text: &str) -> Option<Modifier> {
        if let Some(t) = ScalarType::from_name(text) {
            return Some(Modifier::Type(t));
        }
        if let Some(w) = Word::from_name(text) {
            return Some(Modifier::Word(w));
        }
        if let Some(s) = StateSpace::from_name(text) {
            return Some(Modifier::Space(s));
        }
        match text {
            "v2" => return Some(Modifier::Vector(2)),
            "v4" => return Some(Modifier::Vector(4)),
            "v8" => return Some(Modifier::Vector(8)),
            _ => {}
        }
        parse_shape(text).map(Modifier::Shape)
    }
}

fn parse_shape(text: &str) -> Option<Shape> {
    fn number(s: &str) -> Option<(u16, &str)> {
        let end = s.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(s.len());
        if end == 0 || end > 4 {
            return None;
        }
        Some((s[..end].parse().ok()?, &s[end..]))
    }
    let (m, rest) = number(text.strip_prefix('m')?)?;
    let (n, rest) = number(rest.strip_prefix('n')?)?;
    if rest.is_empty() {
        return Some(Shape { m, n, k: None });
    }
    let (k, rest) = number(rest.strip_prefix('k')?)?;
    rest.is_empty().then_some(Shape { m, n, k: Some(k) })
}

impl fmt::Display for Modifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Modifier::Type(t) => t.fmt(f),
            Modifier::Space(s) => s.fmt(f),
            Modifier::Vector(n) => write!(f, "v{n}"),
            Modifier::Shape(s) => s.fmt(f),
            Modifier::Word(w) => w.fmt(f),
        }
    }
}
