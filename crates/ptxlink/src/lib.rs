//! Linking the PTX of separately compiled translation units (`nvcc -rdc=true`) into one module, as `nvlink`
//! links their SASS: one `.version`/`.target` header; a symbol defined in one unit satisfies the `.extern`
//! declarations of the others; internal (non-`.visible`) symbols that clash between units are renamed
//! apart (every unit with `printf` has its own `$str`); `.weak`/`.common` definitions repeated in several
//! units (template instantiations) are kept once; two `.visible` definitions of one name are an error.
//!
//! The result is text, so the engines' diagnostics and line numbers refer to the linked module.

use std::collections::HashMap;

use ptx::ast::{Item, Linkage};
use ptx::lexer::{Lexer, TokenKind};

/// One translation unit's PTX.
#[derive(Clone, Debug)]
pub struct Unit {
    /// What to call the unit in messages.
    pub name: String,
    pub text: String,
}

/// A module-scope symbol of a unit.
#[derive(Clone, Debug)]
struct Symbol {
    name: String,
    linkage: Linkage,
    /// A function with a body, or a variable that is not `.extern`.
    defined: bool,
    function: bool,
    /// Byte range of the whole item, and of a function's body (from `{`).
    span: (usize, usize),
    body_start: Option<usize>,
}

/// Links the units; a unit that does not parse, or a symbol defined twice, is an error naming the units.
pub fn link(units: &[Unit]) -> Result<String, String> {
    if let [only] = units {
        return Ok(only.text.clone());
    }
    let mut symbols = Vec::with_capacity(units.len());
    let mut version = (0, 0);
    let mut target: Vec<String> = Vec::new();
    for unit in units {
        let module = ptx::parse(&unit.text).map_err(|diags| {
            format!(
                "linking {}: it does not parse:\n{}",
                unit.name,
                ptx::diagnostic::render_all(&diags, &unit.name, unit.text.as_bytes())
            )
        })?;
        if let Some(v) = module.version {
            version = version.max(v);
        }
        for t in &module.target {
            if !target.iter().any(|x| x == t) {
                target.push(t.to_string());
            }
        }
        symbols.push(unit_symbols(&module, &unit.text));
    }
    // Keep one `sm_XX` (the highest) and the other words (`debug`, `texmode_independent`).
    let best_sm = target.iter().filter(|t| t.starts_with("sm_")).max_by_key(|t| sm_number(t)).cloned();
    target.retain(|t| !t.starts_with("sm_"));
    if let Some(sm) = best_sm {
        target.insert(0, sm);
    }

    // Where each name is defined, and who keeps a weak/common definition.
    let mut definers: HashMap<&str, Vec<(usize, Linkage)>> = HashMap::new();
    let mut declared_in: HashMap<&str, Vec<usize>> = HashMap::new();
    for (u, syms) in symbols.iter().enumerate() {
        for s in syms {
            declared_in.entry(s.name.as_str()).or_default().push(u);
            if s.defined && s.linkage != Linkage::Internal {
                definers.entry(s.name.as_str()).or_default().push((u, s.linkage));
            }
        }
    }
    let mut keeper: HashMap<&str, usize> = HashMap::new();
    for (name, defs) in &definers {
        let strong: Vec<usize> = defs.iter().filter(|(_, l)| *l == Linkage::Visible).map(|(u, _)| *u).collect();
        if strong.len() > 1 {
            return Err(format!(
                "linking: `{name}` is defined in both {} and {}",
                units[strong[0]].name, units[strong[1]].name
            ));
        }
        keeper.insert(name, strong.first().copied().unwrap_or(defs[0].0));
    }

    let mut out = String::new();
    out.push_str(&format!("// linked by lockstep from {} translation units\n", units.len()));
    out.push_str(&format!(".version {}.{}\n", version.0, version.1));
    if !target.is_empty() {
        out.push_str(&format!(".target {}\n", target.join(", ")));
    }
    out.push_str(".address_size 64\n");
    for (u, unit) in units.iter().enumerate() {
        // Internal symbols clashing with another unit's name are renamed, except in the first unit that has
        // the name as an internal symbol (a `.visible` one elsewhere always wins the name).
        let mut renames: HashMap<&str, String> = HashMap::new();
        for s in symbols[u].iter().filter(|s| s.linkage == Linkage::Internal) {
            let others = &declared_in[s.name.as_str()];
            let clash = others.iter().any(|&o| {
                o != u && {
                    let theirs = symbols[o].iter().find(|t| t.name == s.name);
                    theirs.is_some_and(|t| t.linkage != Linkage::Internal || o < u)
                }
            });
            if clash {
                renames.insert(s.name.as_str(), format!("{}__lockstep_unit{u}", s.name));
            }
        }
        // Edits to the unit's text: byte range replaced by a string.
        let mut edits: Vec<(usize, usize, String)> = Vec::new();
        for s in &symbols[u] {
            let extern_var_defined_elsewhere =
                !s.function && s.linkage == Linkage::Extern && keeper.contains_key(s.name.as_str());
            let duplicate = s.defined
                && matches!(s.linkage, Linkage::Weak | Linkage::Common)
                && keeper.get(s.name.as_str()).is_some_and(|&k| k != u);
            if extern_var_defined_elsewhere || (duplicate && !s.function) {
                // Declaration order matters for variables: drop it, the definition is in another unit.
                edits.push((s.span.0, s.span.1, String::new()));
            } else if duplicate {
                if let Some(body) = s.body_start {
                    edits.push((body, s.span.1, ";".to_string()));
                }
            }
        }
        out.push_str(&format!("\n// ---- {} ----\n", unit.name));
        out.push_str(&rewrite(&unit.text, &renames, edits));
    }
    Ok(out)
}

fn sm_number(target: &str) -> u32 {
    target.trim_start_matches("sm_").trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().unwrap_or(0)
}

/// The module-scope symbols of a parsed unit.
fn unit_symbols(module: &ptx::ast::Module<'_>, text: &str) -> Vec<Symbol> {
    let mut out = Vec::new();
    for item in &module.items {
        match item {
            Item::Function(f) => {
                let span = (f.span.start as usize, f.span.end as usize);
                let body_start = f.body.as_ref().and_then(|_| body_start(text, f.name_span.end as usize, span.1));
                out.push(Symbol {
                    name: f.name.to_string(),
                    linkage: f.linkage,
                    defined: f.body.is_some(),
                    function: true,
                    span,
                    body_start,
                });
            }
            Item::Variable(v) => {
                for d in &v.declarators {
                    out.push(Symbol {
                        name: d.name.to_string(),
                        linkage: v.linkage,
                        defined: v.linkage != Linkage::Extern,
                        function: false,
                        span: (v.span.start as usize, v.span.end as usize),
                        body_start: None,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// The offset of the `{` that opens a function's body, searching from after its name (a token boundary, so
/// lexing starts there: lexing from the start of the text made linking quadratic in the number of functions).
fn body_start(text: &str, from: usize, end: usize) -> Option<usize> {
    let mut lexer = Lexer::new(text.get(from..end)?);
    let mut diags = ptx::diagnostic::Diagnostics::default();
    loop {
        let t = lexer.next(&mut diags);
        match t.kind {
            TokenKind::Eof => return None,
            TokenKind::LBrace => return Some(from + t.start as usize),
            _ => {}
        }
    }
}

/// The unit's text with its header directives commented out, identifiers renamed and `edits` applied.
fn rewrite(text: &str, renames: &HashMap<&str, String>, mut edits: Vec<(usize, usize, String)>) -> String {
    if !renames.is_empty() {
        let mut lexer = Lexer::new(text);
        let mut diags = ptx::diagnostic::Diagnostics::default();
        loop {
            let t = lexer.next(&mut diags);
            match t.kind {
                TokenKind::Eof => break,
                TokenKind::Ident => {
                    let (s, e) = (t.start as usize, t.end as usize);
                    if let Some(new) = renames.get(&text[s..e]) {
                        edits.push((s, e, new.clone()));
                    }
                }
                _ => {}
            }
        }
    }
    // Header lines (always on their own line in compiler output).
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if [".version", ".target", ".address_size"].iter().any(|d| trimmed.starts_with(d)) {
            let start = offset + (line.len() - trimmed.len());
            edits.push((start, start, "// ".to_string()));
        }
        offset += line.len();
    }
    // Apply edits back to front; a rename inside a removed range is dropped with it.
    edits.sort_by_key(|e| (e.0, std::cmp::Reverse(e.1)));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (s, e, new) in edits {
        if s < at {
            continue;
        }
        out.push_str(&text[at..s]);
        out.push_str(&new);
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, text: &str) -> Unit {
        Unit { name: name.to_string(), text: text.to_string() }
    }

    const A: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) helper(.param .b32 helper_param_0);
.extern .global .align 4 .u32 shared_counter;
.global .align 1 .b8 $str[3] = {104, 105, 0};
.visible .entry k1(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    { .param .b32 a; st.param.b32 [a], %r1; .param .b32 r; call.uni (r), helper, (a); ld.param.b32 %r2, [r]; }
    ld.global.u32 %r3, [shared_counter];
    add.s32 %r2, %r2, %r3;
    st.global.u32 [%rd1], %r2;
    ret;
}
.weak .func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
    .reg .b32 %r<2>;
    ld.param.b32 %r1, [twice_param_0];
    st.param.b32 [func_retval0], %r1;
    ret;
}
"#;

    const B: &str = r#"
.version 8.5
.target sm_80
.address_size 64
.visible .global .align 4 .u32 shared_counter = 7;
.global .align 1 .b8 $str[3] = {111, 107, 0};
.visible .func (.param .b32 func_retval0) helper(.param .b32 helper_param_0)
{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [helper_param_0];
    mul.lo.s32 %r2, %r1, 3;
    st.param.b32 [func_retval0], %r2;
    ret;
}
.weak .func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
    .reg .b32 %r<2>;
    ld.param.b32 %r1, [twice_param_0];
    st.param.b32 [func_retval0], %r1;
    ret;
}
.visible .entry k2(.param .u64 p)
{
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    mov.u64 %rd2, $str;
    st.global.u64 [%rd1], %rd2;
    ret;
}
"#;

    #[test]
    fn units_link_into_one_module_that_compiles() {
        let linked = link(&[unit("a.ptx", A), unit("b.ptx", B)]).unwrap();
        assert!(linked.contains(".version 8.5\n"), "{linked}");
        assert!(linked.contains("$str__lockstep_unit1"), "the second unit's $str is renamed:\n{linked}");
        let module = ir::compile(&linked).unwrap_or_else(|d| panic!("{d:?}\n{linked}"));
        let defined: Vec<&str> =
            module.functions.values().filter(|f| f.body.is_some()).map(|f| f.name.as_str()).collect();
        assert_eq!(defined.iter().filter(|n| **n == "twice").count(), 1, "{defined:?}");
        for name in ["k1", "k2", "helper"] {
            assert!(defined.contains(&name), "{name} in {defined:?}");
        }
        let counter: Vec<_> = module.globals.values().filter(|g| g.name == "shared_counter").collect();
        assert_eq!(counter.len(), 1, "the extern declaration is dropped for the definition");
        assert!(counter[0].init.is_some());
    }

    #[test]
    fn two_visible_definitions_are_an_error() {
        let e = link(&[unit("b1.ptx", B), unit("b2.ptx", B)]).unwrap_err();
        assert!(e.contains("is defined in both b1.ptx and b2.ptx"), "{e}");
        let e = link(&[unit("a.ptx", A), unit("bad.ptx", "garbage")]).unwrap_err();
        assert!(e.contains("bad.ptx"), "{e}");
    }
}
