#!/usr/bin/env python3
"""Generates crates/cudadrv/src/symbols.rs from NVIDIA's cuda.h and cudaTypedefs.h.

    python3 crates/cudadrv/gen/symbols.py [INCLUDE_DIR]

INCLUDE_DIR defaults to corpus/.toolchain/cuda13/nvidia/cu13/include (relative to the repository root).

Two tables come out, both derived by preprocessing the headers (a small C preprocessor below: #if/#ifdef,
object- and function-like macros with ##, #undef):

* EXPORTS: every function name cuda.h declares, under each configuration NVIDIA builds or users compile it
  in: the default one (ABI names such as cuMemAlloc_v2), CUDA_API_PER_THREAD_DEFAULT_STREAM (the _ptds/_ptsz
  names) and __CUDA_API_VERSION_INTERNAL (the driver's own view: the legacy un-suffixed names and the
  per-thread names). The union is what libcuda.so.1 exports for cuda.h's API.
* PROC_TABLE: what cuGetProcAddress resolves. cudaTypedefs.h has one PFN_<api>_v<version> typedef per ABI
  change of <api>; the i-th version (oldest first) is the ABI symbol <api> for i = 1 and <api>_v<i> after,
  which is checked against cuda.h (the newest must be what `#define <api> ...` names, every one must be
  declared). PFN_<api>_v<version>_ptds/_ptsz typedefs name the per-thread default stream variants: the
  variant of the ABI symbol in force at that version. A row's per_thread is the variant of its symbol when
  one exists, whatever the row's version (cuMemcpy at 4000 gives cuMemcpy_ptds when asked: the variant came
  in 7000, but it is the same ABI). Each typedef version still makes a row (cuMemcpy 7000 repeats 4000).
  Where cuda.h declares the newer ABI as a function of its own instead of `#define`-ing the API name to it
  (cuStreamGetCtx_v2, cuCtxSynchronize_v2, cuGraphAddNode_v3, ...), the base name still resolves to it at
  its version, and the suffixed name gets a row too (cuda-python asks for "cuStreamGetCtx_v2").

Standard library only. The generator stops with an error when the headers break one of its assumptions.
"""

import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
DEFAULT_INCLUDE = os.path.normpath(os.path.join(HERE, "..", "..", "..", "corpus", ".toolchain", "cuda13", "nvidia", "cu13", "include"))
OUTPUT = os.path.join(HERE, "..", "src", "symbols.rs")

# The configurations cuda.h is read under (macros predefined on the command line).
CONFIGS = {
    "default": {},
    "per-thread": {"CUDA_API_PER_THREAD_DEFAULT_STREAM": "1"},
    "internal": {"__CUDA_API_VERSION_INTERNAL": "1"},
}
# Always predefined (a 64-bit Linux GCC build of C, not C++).
BASE_DEFINES = {"__GNUC__": "13", "__LP64__": "1", "__STDC_VERSION__": "201710L"}

# API names whose newest ABI symbol (cuda.h's `#define <api> <symbol>`) does not follow the <api>_v<N>
# pattern. Each maps to the function whose typedef version becomes the row's version.
#  cuGraphInstantiate: cuda.h (12.0 on) has `#define cuGraphInstantiate cuGraphInstantiateWithFlags`, while
#  cudaTypedefs.h has PFN_cuGraphInstantiate only for v10000 and v11000 (the old 5-argument ABI, symbols
#  cuGraphInstantiate and cuGraphInstantiate_v2). The 12.x cudaTypedefs.h said
#  `#define PFN_cuGraphInstantiate PFN_cuGraphInstantiateWithFlags_v11040`, and cuda-python resolves
#  "cuGraphInstantiate" at 11040 to get cuGraphInstantiateWithFlags: the row is version 11040.
RENAMED = {"cuGraphInstantiate": "cuGraphInstantiateWithFlags"}

IDENT = re.compile(r"[A-Za-z_]\w*")
TOKEN = re.compile(r"\s*(##|#|[A-Za-z_]\w*|\d\w*|&&|\|\||[<>=!]=|<<|>>|\S)")


def die(msg):
    sys.exit("symbols.py: " + msg)


def strip_comments(text):
    """Removes /* */ and // comments (keeping newlines and string literals), joins continued lines."""
    text = text.replace("\\\n", " ")
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                die("unterminated comment")
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j + 2
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tokens(s):
    s = s.strip()
    out, pos = [], 0
    while pos < len(s):
        m = TOKEN.match(s, pos)
        if not m:
            break
        out.append(m.group(1))
        pos = m.end()
    return out


class Preprocessor:
    def __init__(self, defines):
        self.objects = {}  # name -> body tokens
        self.functions = {}  # name -> (params, body tokens)
        for k, v in defines.items():
            self.objects[k] = tokens(v)

    def defined(self, name):
        return name in self.objects or name in self.functions

    # ---- expansion (enough of C's rules for identifiers, ## and self-reference) ----
    def expand(self, toks, hide=frozenset()):
        out = []
        i = 0
        while i < len(toks):
            t = toks[i]
            if t in hide or not IDENT.fullmatch(t):
                out.append(t)
                i += 1
            elif t in self.objects:
                out.extend(self.expand(self.objects[t], hide | {t}))
                i += 1
            elif t in self.functions and i + 1 < len(toks) and toks[i + 1] == "(":
                params, body = self.functions[t]
                args, depth, cur, j = [], 0, [], i + 2
                while j < len(toks):
                    a = toks[j]
                    if a == "(":
                        depth += 1
                    elif a == ")":
                        if depth == 0:
                            break
                        depth -= 1
                    elif a == "," and depth == 0:
                        args.append(cur)
                        cur = []
                        j += 1
                        continue
                    cur.append(a)
                    j += 1
                args.append(cur)
                if len(args) != len(params) and not (params == [] and args == [[]]):
                    die("macro %s takes %d arguments" % (t, len(params)))
                raw = dict(zip(params, args))
                subst = []
                for k, b in enumerate(body):
                    if b in raw:
                        pasted = (k > 0 and body[k - 1] == "##") or (k + 1 < len(body) and body[k + 1] == "##")
                        subst.extend(raw[b] if pasted else self.expand(raw[b], hide))
                    else:
                        subst.append(b)
                pasted = []
                k = 0
                while k < len(subst):
                    if subst[k] == "##":
                        pasted[-1] = pasted[-1] + subst[k + 1]
                        k += 2
                    else:
                        pasted.append(subst[k])
                        k += 1
                out.extend(self.expand(pasted, hide | {t}))
                i = j + 1
            else:
                out.append(t)
                i += 1
        return out

    def expand_name(self, name):
        toks = self.expand([name])
        if len(toks) != 1 or not IDENT.fullmatch(toks[0]):
            die("%s expands to %r, not one name" % (name, toks))
        return toks[0]

    def evaluate(self, expr):
        toks = tokens(expr)
        resolved = []
        i = 0
        while i < len(toks):
            t = toks[i]
            if t == "defined":
                if toks[i + 1] == "(":
                    name, i = toks[i + 2], i + 4
                else:
                    name, i = toks[i + 1], i + 2
                resolved.append("1" if self.defined(name) else "0")
                continue
            resolved.append(t)
            i += 1
        py = []
        for t in self.expand(resolved):
            if t == "&&":
                py.append(" and ")
            elif t == "||":
                py.append(" or ")
            elif t == "!":
                py.append(" not ")
            elif re.fullmatch(r"\d\w*", t):
                py.append(str(int(re.sub(r"[uUlL]+$", "", t), 0)))
            elif IDENT.fullmatch(t):
                py.append("0")  # an undefined identifier
            elif t in ("(", ")", ">=", "<=", "==", "!=", "<", ">", "+", "-"):
                py.append(t)
            else:
                die("cannot evaluate #if %s" % expr)
        return bool(eval("".join(py), {"__builtins__": {}}))

    def run(self, text, on_text):
        """Preprocesses text; on_text(chunk, self) gets each run of active non-directive lines."""
        stack = []  # (parent active, a branch was taken, this branch active)
        active = True
        chunk = []

        def flush():
            if chunk:
                on_text("\n".join(chunk), self)
                chunk.clear()

        for line in strip_comments(text).split("\n"):
            m = re.match(r"\s*#\s*(\w*)(.*)$", line)
            if not m:
                if active:
                    chunk.append(line)
                continue
            flush()
            d, rest = m.group(1), m.group(2).strip()
            if d in ("if", "ifdef", "ifndef"):
                if not active:
                    cond = False
                elif d == "if":
                    cond = self.evaluate(rest)
                else:
                    cond = self.defined(rest.split()[0]) == (d == "ifdef")
                stack.append((active, cond, active and cond))
                active = active and cond
            elif d == "elif":
                parent, taken, _ = stack.pop()
                cond = parent and not taken and self.evaluate(rest)
                stack.append((parent, taken or cond, cond))
                active = cond
            elif d == "else":
                parent, taken, _ = stack.pop()
                stack.append((parent, True, parent and not taken))
                active = parent and not taken
            elif d == "endif":
                active = stack.pop()[0]
            elif not active:
                continue
            elif d == "define":
                m2 = re.match(r"([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)$", rest)
                name, params, body = m2.group(1), m2.group(3), m2.group(4)
                self.objects.pop(name, None)
                self.functions.pop(name, None)
                if m2.group(2) is not None:
                    self.functions[name] = ([p.strip() for p in params.split(",") if p.strip()], tokens(body))
                else:
                    self.objects[name] = tokens(body)
            elif d == "undef":
                self.objects.pop(rest, None)
                self.functions.pop(rest, None)
            elif d == "error":
                die("#error " + rest)
            elif d in ("include", "pragma", ""):
                pass
            else:
                die("unknown directive #" + d)
        flush()
        if stack:
            die("unbalanced #if")


DECL = re.compile(r"\bCUDAAPI\s+([A-Za-z_]\w*)\s*\(")
PFN = re.compile(r"\(\s*CUDAAPI\s*\*\s*(PFN_\w+)\s*\)")
PFN_NAME = re.compile(r"PFN_(\w+)_v(\d+)(?:_(ptds|ptsz))?")


def read_cuda_h(path):
    """Per configuration: the set of declared function names, and the final expansion of every macro name
    that cuda.h #defines to a function name (the `cuX -> cuX_vN` table)."""
    text = open(path, encoding="utf-8").read()
    macro_names = set(re.findall(r"^\s*#\s*define\s+(cu\w+)\s+\S", strip_comments(text), re.M))
    decls, aliases = {}, {}
    for cfg, defs in CONFIGS.items():
        found = set()

        def on_text(chunk, pp, found=found):
            for name in DECL.findall(chunk):
                found.add(pp.expand_name(name))

        pp = Preprocessor({**BASE_DEFINES, **defs})
        pp.run(text, on_text)
        decls[cfg] = found
        # The macros in force for a user of the header: the state after the whole file.
        aliases[cfg] = {m: pp.expand_name(m) for m in macro_names if m in pp.objects}
    return decls, aliases


def read_typedefs(path):
    """PFN typedef names of cudaTypedefs.h, read under every configuration (the union)."""
    text = open(path, encoding="utf-8").read()
    found = set()
    for defs in CONFIGS.values():
        pp = Preprocessor({**BASE_DEFINES, **defs})
        pp.run(text, lambda chunk, _pp: found.update(PFN.findall(chunk)))
    base = defaultdict(set)  # api -> versions
    per_thread = defaultdict(dict)  # api -> {version: "ptds" | "ptsz"}
    for pfn in sorted(found):
        m = PFN_NAME.fullmatch(pfn)
        if not m:
            die("unexpected typedef name " + pfn)
        api, version, pt = m.group(1), int(m.group(2)), m.group(3)
        if pt:
            if version in per_thread[api] and per_thread[api][version] != pt:
                die("both _ptds and _ptsz for %s_v%d" % (api, version))
            per_thread[api][version] = pt
        else:
            base[api].add(version)
    return base, per_thread


def suffixed(api, i):
    return api if i == 0 else "%s_v%d" % (api, i + 1)


def build(include):
    decls, aliases = read_cuda_h(os.path.join(include, "cuda.h"))
    exports = set().union(*decls.values())
    notes = []
    # Names one configuration declares and the internal one does not (the internal build should see all).
    for cfg in ("default", "per-thread"):
        extra = decls[cfg] - decls["internal"]
        if extra:
            notes.append("declared under %s but not under internal: %s" % (cfg, ", ".join(sorted(extra))))

    base, per_thread = read_typedefs(os.path.join(include, "cudaTypedefs.h"))
    for api in per_thread:
        if api not in base:
            die("%s has only per-thread typedefs" % api)

    default_alias = aliases["default"]
    pt_alias = aliases["per-thread"]
    rows = {}  # (name, version) -> symbol
    pt_names = set()  # per-thread ABI names the typedefs describe
    separate = []  # (api, newer symbol): versioned functions cuda.h declares under their own name
    for api in sorted(base):
        versions = sorted(base[api])
        symbols = [suffixed(api, i) for i in range(len(versions))]
        for s in symbols:
            if s not in exports:
                die("PFN_%s: %s is not declared by cuda.h" % (api, s))
        newest = default_alias.get(api, api)
        if api in RENAMED:
            target = RENAMED[api]
            if newest != target:
                die("cuda.h no longer maps %s to %s" % (api, target))
            if len(base.get(target, ())) != 1:
                die("%s has more than one typedef version" % target)
            versions.append(max(base[target]))
            symbols.append(target)
            if versions[-1] <= versions[-2]:
                die("%s: the %s row is not the newest" % (api, target))
        elif newest != symbols[-1]:
            if newest not in symbols:
                die("%s: cuda.h maps it to %s, the typedefs to %s" % (api, newest, symbols[-1]))
            # cuda.h's name stays on an older ABI (no #define at all, or one to an older _vN): the newer
            # ABIs are functions of their own (cuStreamGetCtx_v2, cuGraphAddNode_v3, ...).
            j = symbols.index(newest)
            separate.extend((api, s, v) for s, v in zip(symbols[j + 1:], versions[j + 1:]))
        for v, s in zip(versions, symbols):
            rows[(api, v)] = s
        # Per-thread typedefs: the variant of the ABI symbol in force at that version.
        for v, pt in sorted(per_thread.get(api, {}).items()):
            below = [i for i, bv in enumerate(versions) if bv <= v]
            if not below:
                die("PFN_%s_v%d_%s is older than every default typedef" % (api, v, pt))
            name = symbols[below[-1]] + "_" + pt
            if name not in exports:
                die("PFN_%s_v%d_%s: %s is not declared by cuda.h" % (api, v, pt, name))
            pt_names.add(name)
            if (api, v) not in rows:
                rows[(api, v)] = symbols[below[-1]]
        # With CUDA_API_PER_THREAD_DEFAULT_STREAM, cuda.h's macro for the API name should name the
        # per-thread variant of the newest symbol.
        if api in pt_alias and pt_alias[api] != newest and pt_alias[api] not in pt_names:
            notes.append("per-thread cuda.h maps %s to %s, which no typedef describes" % (api, pt_alias[api]))

    # Separately declared newer functions are also looked up by their own name (cuda-python asks for
    # "cuStreamGetCtx_v2" at 12050, "cuCtxGetDevice_v2" at 13000 ...): one row each, same version.
    for api, sym, v in separate:
        if (sym, v) in rows:
            die("duplicate row " + sym)
        rows[(sym, v)] = sym

    table = []
    for (name, v), sym in sorted(rows.items()):
        pt = None
        for suffix in ("_ptds", "_ptsz"):
            if sym + suffix in pt_names:
                pt = sym + suffix
        table.append((name, v, sym, pt))

    # Exports that no row reaches.
    reached = {r[2] for r in table} | {r[3] for r in table if r[3]}
    unreached = sorted(exports - reached)
    declared_apis = {n for n in decls["default"]}
    no_typedef = sorted(n for n in declared_apis if n not in reached)
    return sorted(exports), table, notes, separate, unreached, no_typedef


TESTS = r'''
#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str, version: u32) -> Option<&'static str> {
        resolve(name, version, false)
    }

    fn pt(name: &str, version: u32) -> Option<&'static str> {
        resolve(name, version, true)
    }

    #[test]
    fn tables_are_sorted_and_consistent() {
        assert!(EXPORTS.windows(2).all(|w| w[0] < w[1]));
        assert!(PROC_TABLE.windows(2).all(|w| (w[0].name, w[0].version) < (w[1].name, w[1].version)));
        for p in PROC_TABLE {
            assert!(EXPORTS.binary_search(&p.symbol).is_ok(), "{} not exported", p.symbol);
            if let Some(s) = p.per_thread {
                assert!(EXPORTS.binary_search(&s).is_ok(), "{s} not exported");
            }
        }
    }

    #[test]
    fn exports_cover_abi_legacy_and_per_thread_names() {
        for name in [
            "cuMemAlloc",
            "cuMemAlloc_v2",
            "cuCtxCreate",
            "cuCtxCreate_v4",
            "cuMemcpy_ptds",
            "cuMemcpyAsync_ptsz",
            "cuLaunchKernel_ptsz",
            "cuMemcpyHtoD_v2_ptds",
            "cuGetProcAddress",
            "cuGetProcAddress_v2",
            "cuStreamGetCaptureInfo_v3_ptsz",
            "cuInit",
        ] {
            assert!(EXPORTS.binary_search(&name).is_ok(), "{name}");
        }
        assert!(EXPORTS.binary_search(&"cuGetProcAddress_v2_ptsz").is_err()); // a static inline in cuda.h
        assert!(EXPORTS.binary_search(&"cuGLInit").is_err()); // cudaGL.h
    }

    #[test]
    fn mem_alloc() {
        assert_eq!(r("cuMemAlloc", 2000), Some("cuMemAlloc"));
        assert_eq!(r("cuMemAlloc", 3010), Some("cuMemAlloc"));
        assert_eq!(r("cuMemAlloc", 3020), Some("cuMemAlloc_v2"));
        assert_eq!(r("cuMemAlloc", 13000), Some("cuMemAlloc_v2"));
        assert_eq!(pt("cuMemAlloc", 13000), Some("cuMemAlloc_v2"));
        assert_eq!(r("cuMemAlloc", 1000), None);
        assert!(known("cuMemAlloc"));
    }

    #[test]
    fn ctx_create() {
        assert_eq!(r("cuCtxCreate", 2000), Some("cuCtxCreate"));
        assert_eq!(r("cuCtxCreate", 3020), Some("cuCtxCreate_v2"));
        assert_eq!(r("cuCtxCreate", 11040), Some("cuCtxCreate_v3"));
        assert_eq!(r("cuCtxCreate", 12000), Some("cuCtxCreate_v3"));
        assert_eq!(r("cuCtxCreate", 12050), Some("cuCtxCreate_v4"));
        assert_eq!(r("cuCtxCreate", 13050), Some("cuCtxCreate_v4"));
    }

    #[test]
    fn memcpy_per_thread() {
        assert_eq!(r("cuMemcpyAsync", 13000), Some("cuMemcpyAsync"));
        assert_eq!(pt("cuMemcpyAsync", 13000), Some("cuMemcpyAsync_ptsz"));
        assert_eq!(pt("cuMemcpyAsync", 7000), Some("cuMemcpyAsync_ptsz"));
        assert_eq!(r("cuMemcpyAsync", 3020), None);
        assert_eq!(pt("cuMemcpy", 12000), Some("cuMemcpy_ptds"));
        assert_eq!(pt("cuMemcpyHtoD", 13000), Some("cuMemcpyHtoD_v2_ptds"));
        assert_eq!(r("cuMemcpyHtoD", 13000), Some("cuMemcpyHtoD_v2"));
        // The 32-bit legacy ABI never had a per-thread variant.
        assert_eq!(pt("cuMemcpyHtoD", 2000), Some("cuMemcpyHtoD"));
        assert_eq!(pt("cuMemsetD8Async", 13000), Some("cuMemsetD8Async_ptsz"));
    }

    #[test]
    fn get_proc_address() {
        assert_eq!(r("cuGetProcAddress", 11020), None);
        assert_eq!(r("cuGetProcAddress", 11030), Some("cuGetProcAddress"));
        assert_eq!(r("cuGetProcAddress", 11080), Some("cuGetProcAddress"));
        assert_eq!(r("cuGetProcAddress", 12000), Some("cuGetProcAddress_v2"));
        assert_eq!(pt("cuGetProcAddress", 13000), Some("cuGetProcAddress_v2"));
    }

    #[test]
    fn launch_kernel() {
        assert_eq!(r("cuLaunchKernel", 4000), Some("cuLaunchKernel"));
        assert_eq!(r("cuLaunchKernel", 13000), Some("cuLaunchKernel"));
        assert_eq!(pt("cuLaunchKernel", 13000), Some("cuLaunchKernel_ptsz"));
        assert_eq!(r("cuLaunchKernel", 3020), None);
        assert_eq!(pt("cuLaunchKernelEx", 12000), Some("cuLaunchKernelEx_ptsz"));
    }

    #[test]
    fn stream_get_capture_info() {
        assert_eq!(r("cuStreamGetCaptureInfo", 10000), None);
        assert_eq!(r("cuStreamGetCaptureInfo", 10010), Some("cuStreamGetCaptureInfo"));
        assert_eq!(pt("cuStreamGetCaptureInfo", 10010), Some("cuStreamGetCaptureInfo_ptsz"));
        assert_eq!(r("cuStreamGetCaptureInfo", 11030), Some("cuStreamGetCaptureInfo_v2"));
        assert_eq!(pt("cuStreamGetCaptureInfo", 11030), Some("cuStreamGetCaptureInfo_v2_ptsz"));
        assert_eq!(r("cuStreamGetCaptureInfo", 12030), Some("cuStreamGetCaptureInfo_v3"));
        assert_eq!(pt("cuStreamGetCaptureInfo", 13000), Some("cuStreamGetCaptureInfo_v3_ptsz"));
    }

    #[test]
    fn special_cases() {
        assert_eq!(r("cuGraphInstantiate", 10000), Some("cuGraphInstantiate"));
        assert_eq!(r("cuGraphInstantiate", 11000), Some("cuGraphInstantiate_v2"));
        assert_eq!(r("cuGraphInstantiate", 11040), Some("cuGraphInstantiateWithFlags"));
        assert_eq!(r("cuGraphInstantiate", 13000), Some("cuGraphInstantiateWithFlags"));
        assert_eq!(r("cuStreamGetCtx", 9020), Some("cuStreamGetCtx"));
        assert_eq!(r("cuStreamGetCtx", 12050), Some("cuStreamGetCtx_v2"));
        assert_eq!(pt("cuStreamGetCtx", 12050), Some("cuStreamGetCtx_v2_ptsz"));
        assert_eq!(r("cuStreamGetCtx_v2", 12050), Some("cuStreamGetCtx_v2"));
        assert_eq!(r("cuStreamGetCtx_v2", 12040), None);
        assert_eq!(r("cuCtxSynchronize", 12000), Some("cuCtxSynchronize"));
        assert_eq!(r("cuCtxSynchronize", 13000), Some("cuCtxSynchronize_v2"));
        assert_eq!(pt("cuStreamBeginCapture", 10000), Some("cuStreamBeginCapture_ptsz"));
        assert_eq!(pt("cuStreamBeginCapture", 10010), Some("cuStreamBeginCapture_v2_ptsz"));
    }

    #[test]
    fn unknown_names() {
        assert_eq!(r("cuNotAFunction", 13000), None);
        assert!(!known("cuNotAFunction"));
        assert!(!known(""));
        assert!(!known("cuMemAlloc_v2")); // cuGetProcAddress takes the base name
        assert!(!known("cuGLInit")); // graphics interop is not in cuda.h
        assert!(known("cuInit"));
        assert_eq!(r("cuInit", 2000), Some("cuInit"));
    }
}
'''


def rust_str(s):
    return '"%s"' % s


def render(exports, table, include):
    rel = os.path.relpath(include, REPO)
    lines = []
    w = lines.append
    w("// @generated by `python3 crates/cudadrv/gen/symbols.py` from %s/{cuda.h,cudaTypedefs.h}." % rel)
    w("// Do not edit: change the generator and rerun it.")
    w("//! The CUDA 13 driver API's symbol tables: what libcuda.so.1 exports for cuda.h, and how")
    w("//! `cuGetProcAddress` maps an API name and a CUDA version to one of those symbols.")
    w("")
    w("/// One `cuGetProcAddress` row: from CUDA version `version` on (until the next row of the same `name`),")
    w("/// API `name` resolves to the exported function `symbol`, or `per_thread` (a `_ptds`/`_ptsz` name) when")
    w("/// the caller asks for the per-thread default stream. `per_thread` is the variant of `symbol` whenever")
    w("/// one exists, even on rows older than the typedef that introduced it (the ABI is the same).")
    w("#[derive(Debug, Clone, Copy, PartialEq, Eq)]")
    w("pub struct Proc {")
    w("    pub name: &'static str,")
    w("    pub version: u32,")
    w("    pub symbol: &'static str,")
    w("    pub per_thread: Option<&'static str>,")
    w("}")
    w("")
    w("/// Every function libcuda.so.1 exports for cuda.h (ABI names, legacy names, per-thread variants), sorted.")
    w("pub const EXPORTS: &[&str] = &[")
    for e in exports:
        w("    %s," % rust_str(e))
    w("];")
    w("")
    w("/// `cuGetProcAddress` rows, sorted by (name, version).")
    w("#[rustfmt::skip]")
    w("pub const PROC_TABLE: &[Proc] = &[")
    for name, v, sym, pt in table:
        ptxt = "Some(%s)" % rust_str(pt) if pt else "None"
        w("    Proc { name: %s, version: %d, symbol: %s, per_thread: %s }," % (rust_str(name), v, rust_str(sym), ptxt))
    w("];")
    w("")
    w("/// The row `cuGetProcAddress(name, _, cuda_version, _)` uses: the newest one not newer than `cuda_version`.")
    w("pub fn lookup(name: &str, cuda_version: u32) -> Option<&'static Proc> {")
    w("    let end = PROC_TABLE.partition_point(|p| (p.name, p.version) <= (name, cuda_version));")
    w("    end.checked_sub(1).map(|i| &PROC_TABLE[i]).filter(|p| p.name == name)")
    w("}")
    w("")
    w("/// The symbol `cuGetProcAddress` returns for `name` at `cuda_version`; `per_thread` for")
    w("/// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. `None` when the name is unknown (CUDA_ERROR_NOT_FOUND) or")
    w("/// every row is newer (CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: tell them apart with [`known`]).")
    w("pub fn resolve(name: &str, cuda_version: u32, per_thread: bool) -> Option<&'static str> {")
    w("    let p = lookup(name, cuda_version)?;")
    w("    Some(if per_thread { p.per_thread.unwrap_or(p.symbol) } else { p.symbol })")
    w("}")
    w("")
    w("/// Whether `cuGetProcAddress` knows the API name at some version.")
    w("pub fn known(name: &str) -> bool {")
    w("    let i = PROC_TABLE.partition_point(|p| p.name < name);")
    w("    PROC_TABLE.get(i).is_some_and(|p| p.name == name)")
    w("}")
    return "\n".join(lines) + "\n" + TESTS


def main():
    include = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_INCLUDE
    exports, table, notes, separate, unreached, no_typedef = build(include)
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(render(exports, table, include))
    apis = {r[0] for r in table}
    print("exports: %d, proc rows: %d, API names: %d" % (len(exports), len(table), len(apis)))
    print("rows with a per-thread symbol: %d" % sum(1 for r in table if r[3]))
    for api, sym, v in separate:
        print("separate newer function: %s at %d -> %s (also a row of its own)" % (api, v, sym))
    for n in notes:
        print("note: " + n)
    print("exports no row reaches (%d): %s" % (len(unreached), " ".join(unreached)))
    print("public functions without a PFN typedef (%d): %s" % (len(no_typedef), " ".join(no_typedef)))


if __name__ == "__main__":
    main()
