//! Function headers' parameter lists and directives, and function bodies: statements, labels, declarations,
//! nested blocks, `.loc`, `.pragma`, `.branchtargets`, `.calltargets` and `.callprototype`.

use smallvec::SmallVec;

use super::module::{decl_space, linkage_of, string_body};
use super::{PResult, Parser, Stop, MAX_DEPTH};
use crate::ast::*;
use crate::lexer::{clip, Token, TokenKind};
use crate::lookup;

impl<'a> Parser<'a> {
    /// `( param, ... )`, possibly empty.
    pub(super) fn param_list(&mut self) -> PResult<Vec<Param<'a>>> {
        self.expect(TokenKind::LParen, "`(` to start the parameter list")?;
        let mut params = Vec::new();
        if self.eat(TokenKind::RParen).is_some() {
            return Ok(params);
        }
        loop {
            params.push(self.param()?);
            match self.tok.kind {
                TokenKind::Comma => {
                    self.bump();
                }
                TokenKind::RParen => {
                    self.bump();
                    return Ok(params);
                }
                _ => return Err(self.unexpected("`,` or `)` after the parameter")),
            }
        }
    }

    /// `.param [.align N] [.vN] .type [.ptr [.space] [.align N]] [name] [dims]` (or `.reg .type name`).
    fn param(&mut self) -> PResult<Param<'a>> {
        let start = self.tok.start;
        let space = match self.tok_text() {
            ".param" | ".reg" if self.at(TokenKind::Directive) => {
                let t = self.bump();
                if self.text(t) == ".param" {
                    StateSpace::Param
                } else {
                    StateSpace::Reg
                }
            }
            _ => return Err(self.unexpected("`.param` or `.reg` to start a parameter")),
        };
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        let mut ptr = None;
        while self.at(TokenKind::Directive) {
            match self.tok_text() {
                ".align" => {
                    self.bump();
                    align = Some(self.expect_u32("an alignment after `.align`")?);
                }
                ".v2" | ".v4" | ".v8" if ty.is_none() => {
                    vector = self.tok_text().get(2..).and_then(|n| n.parse().ok());
                    self.bump();
                }
                ".ptr" if ty.is_some() && ptr.is_none() => {
                    self.bump();
                    let mut attr = PtrAttr { space: None, align: None };
                    if let Some(s) = decl_space(self.tok_text()).filter(|_| self.at(TokenKind::Directive)) {
                        self.bump();
                        attr.space = Some(s);
                    }
                    if self.tok_text() == ".align" && self.at(TokenKind::Directive) {
                        self.bump();
                        attr.align = Some(self.expect_u32("an alignment after `.align`")?);
                    }
                    ptr = Some(attr);
                }
                text if ty.is_none() => match text.strip_prefix('.').and_then(lookup::scalar_type) {
                    Some(t) => {
                        self.bump();
                        ty = Some(t);
                    }
                    None => {
                        let msg = format!("unknown type `{}` in the parameter", clip(text));
                        self.error(self.tok.span(), msg);
                        return Err(Stop);
                    }
                },
                _ => return Err(self.unexpected("the parameter name")),
            }
        }
        let Some(ty) = ty else {
            return Err(self.unexpected("a type such as `.b32` in the parameter"));
        };
        let name = match self.tok.kind {
            TokenKind::Ident => {
                let t = self.bump();
                Some(self.text(t)).filter(|n| *n != "_")
            }
            _ => None,
        };
        let dims = self.dims()?;
        Ok(Param { space, align, vector, ty, ptr, name, dims, span: self.span_from(start) })
    }

    /// One performance-tuning directive after a function header, or `None` if the current directive is not
    /// one (the caller then expects the body).
    pub(super) fn function_directive(&mut self) -> PResult<Option<FunctionDirective<'a>>> {
        let start = self.tok.start;
        let d = match self.tok_text() {
            ".maxntid" | ".reqntid" | ".reqnctapercluster" => {
                let which = self.bump_text();
                let mut dims: SmallVec<[u32; 3]> = SmallVec::new();
                loop {
                    dims.push(self.expect_u32(&format!("a thread or block count after `{which}`"))?);
                    if dims.len() == 3 || self.eat(TokenKind::Comma).is_none() {
                        break;
                    }
                }
                let span = self.span_from(start);
                match which {
                    ".maxntid" => FunctionDirective::MaxNtid(dims, span),
                    ".reqntid" => FunctionDirective::ReqNtid(dims, span),
                    _ => FunctionDirective::ReqNctaPerCluster(dims, span),
                }
            }
            ".minnctapersm"
            | ".maxnctapersm"
            | ".maxnreg"
            | ".maxclusterrank"
            | ".abi_preserve"
            | ".abi_preserve_control" => {
                let which = self.bump_text();
                let n = self.expect_u32(&format!("a count after `{which}`"))?;
                let span = self.span_from(start);
                match which {
                    ".minnctapersm" => FunctionDirective::MinNctaPerSm(n, span),
                    ".maxnctapersm" => FunctionDirective::MaxNctaPerSm(n, span),
                    ".maxnreg" => FunctionDirective::MaxNreg(n, span),
                    ".abi_preserve" => FunctionDirective::AbiPreserve(n, span),
                    ".abi_preserve_control" => FunctionDirective::AbiPreserveControl(n, span),
                    _ => FunctionDirective::MaxClusterRank(n, span),
                }
            }
            ".noreturn" => FunctionDirective::NoReturn(self.bump().span()),
            ".explicitcluster" => FunctionDirective::ExplicitCluster(self.bump().span()),
            ".blocksareclusters" => FunctionDirective::BlocksAreClusters(self.bump().span()),
            ".pragma" => {
                self.bump();
                let s = self.expect(TokenKind::Str, "a string after `.pragma`")?;
                self.expect(TokenKind::Semi, "`;` after the `.pragma` string")?;
                FunctionDirective::Pragma(string_body(self.text(s)), self.span_from(start))
            }
            _ => return Ok(None),
        };
        Ok(Some(d))
    }

    /// Statements up to and including the closing `}`; the `{` (`open`) is consumed. `depth` is the block
    /// nesting level, at most [`MAX_DEPTH`].
    pub(super) fn block_body(&mut self, depth: u32, open: Token) -> Vec<Statement<'a>> {
        let mut stmts = Vec::new();
        if depth == 1 {
            // Statements are large, so growing the vector by doubling copies a lot. Compilers put the closing
            // brace of a function at the start of a line: reserve a statement per 20 bytes up to there (a
            // guess only; it never affects the result).
            let rest = self.src.get(open.end as usize..).unwrap_or("");
            let mut at = 0;
            // At most 64 braces are looked at, so that many small functions cannot make this quadratic.
            for _ in 0..64 {
                // `str::find` with a one-byte char is a fast memchr.
                let Some(i) = rest.get(at..).and_then(|r| r.find('}')) else {
                    break;
                };
                at += i + 1;
                if at < 2 || rest.as_bytes().get(at - 2) == Some(&b'\n') {
                    break;
                }
            }
            stmts.reserve(at / 20);
        }
        loop {
            match self.tok.kind {
                TokenKind::RBrace => {
                    self.bump();
                    return stmts;
                }
                TokenKind::Eof => {
                    // Reported once, by the innermost open block (`line_of` scans the source).
                    if !self.diags.is_full() && !self.eof_reported {
                        let what = format!("`}}` to close the block opened on line {}", self.line_of(open.start));
                        self.unexpected(&what);
                    }
                    return stmts;
                }
                _ => {
                    if self.statement(depth, &mut stmts).is_err() {
                        self.recover_statement();
                    }
                }
            }
        }
    }

    /// Skips to just after the next `;`, or to the next `}`, at the current nesting level.
    fn recover_statement(&mut self) {
        let mut depth = 0u64;
        loop {
            match self.tok.kind {
                TokenKind::Eof => return,
                TokenKind::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn statement(&mut self, depth: u32, out: &mut Vec<Statement<'a>>) -> PResult<()> {
        let start = self.tok.start;
        match self.tok.kind {
            TokenKind::Ident if self.next.kind == TokenKind::Colon => {
                let label = self.bump();
                self.bump();
                let name = self.text(label);
                if self.at(TokenKind::Directive) {
                    match self.tok_text() {
                        ".callprototype" => {
                            return self.call_prototype(name, start).map(|p| out.push(Statement::CallPrototype(p)))
                        }
                        ".branchtargets" | ".calltargets" => {
                            let branch = self.tok_text() == ".branchtargets";
                            self.bump();
                            let mut targets = Vec::new();
                            loop {
                                let t = self.expect(TokenKind::Ident, "a label or function name in the target list")?;
                                targets.push(self.text(t));
                                if self.eat(TokenKind::Comma).is_none() {
                                    break;
                                }
                            }
                            self.expect(TokenKind::Semi, "`;` or `,` after the target")?;
                            let span = self.span_from(start);
                            out.push(if branch {
                                Statement::BranchTargets { label: name, targets, span }
                            } else {
                                Statement::CallTargets { label: name, targets, span }
                            });
                            return Ok(());
                        }
                        _ => {}
                    }
                }
                out.push(Statement::Label(name, label.span()));
            }
            TokenKind::Ident | TokenKind::At => {
                self.instruction(out)?;
            }
            TokenKind::LBrace => {
                if depth >= MAX_DEPTH {
                    let msg = format!("blocks are nested too deeply (the limit is {MAX_DEPTH} levels)");
                    self.error(self.tok.span(), msg);
                    self.skip_balanced();
                    return Ok(());
                }
                let open = self.bump();
                let inner = self.block_body(depth + 1, open);
                out.push(Statement::Block(inner, self.span_from(start)));
            }
            TokenKind::Directive if self.tok_text() == ".loc" => {
                self.bump();
                match self.loc(start) {
                    Ok(loc) => out.push(Statement::Loc(loc)),
                    // `.loc` has no `;`: resume on the next line rather than after the next `;`.
                    Err(Stop) => {
                        while !self.at(TokenKind::Eof) && !self.newline_before_tok() {
                            self.bump();
                        }
                    }
                }
            }
            TokenKind::Directive => out.push(self.body_directive()?),
            TokenKind::Semi => {
                self.bump();
            }
            _ => return Err(self.unexpected("an instruction, a label, a declaration or `}`")),
        }
        Ok(())
    }

    fn body_directive(&mut self) -> PResult<Statement<'a>> {
        let start = self.tok.start;
        let text = self.tok_text();
        match text {
            ".pragma" => {
                self.bump();
                let s = self.expect(TokenKind::Str, "a string after `.pragma`")?;
                self.expect(TokenKind::Semi, "`;` after the `.pragma` string")?;
                Ok(Statement::Pragma(string_body(self.text(s)), self.span_from(start)))
            }
            _ => {
                let linkage = match linkage_of(text) {
                    Some(l) => {
                        self.bump();
                        l
                    }
                    None => Linkage::Internal,
                };
                if self.at(TokenKind::Directive) && decl_space(self.tok_text()).is_some() {
                    return self.var_decl(linkage, start).map(Statement::Variable);
                }
                if linkage != Linkage::Internal {
                    return Err(self.unexpected("a state space such as `.shared` after the linkage"));
                }
                let msg = format!("unexpected directive `{}` in a function body", clip(text));
                self.error(self.tok.span(), msg);
                Err(Stop)
            }
        }
    }

    /// `.loc file line column [, function_name label [, inlined_at file line column]]`; `.loc` consumed.
    fn loc(&mut self, start: u32) -> PResult<Loc<'a>> {
        let file = self.expect_u32("a file index after `.loc`")?;
        let line = self.expect_u32("a line number in `.loc`")?;
        let column = self.expect_u32("a column number in `.loc`")?;
        let mut function_name = None;
        let mut inlined_at = None;
        if self.eat(TokenKind::Comma).is_some() {
            if self.tok_text() != "function_name" {
                return Err(self.unexpected("`function_name` after `,` in `.loc`"));
            }
            self.bump();
            let f = self.expect(TokenKind::Ident, "a label after `function_name`")?;
            function_name = Some(self.text(f));
            if self.eat(TokenKind::Comma).is_some() {
                if self.tok_text() != "inlined_at" {
                    return Err(self.unexpected("`inlined_at` after `,` in `.loc`"));
                }
                self.bump();
                let f = self.expect_u32("a file index after `inlined_at`")?;
                let l = self.expect_u32("a line number after `inlined_at`")?;
                let c = self.expect_u32("a column number after `inlined_at`")?;
                inlined_at = Some((f, l, c));
            }
        }
        Ok(Loc { file, line, column, function_name, inlined_at, span: self.span_from(start) })
    }

    /// `.callprototype [(returns)] _ (params) [.noreturn];` after `label:`.
    fn call_prototype(&mut self, label: &'a str, start: u32) -> PResult<CallPrototype<'a>> {
        self.bump();
        let returns = if self.at(TokenKind::LParen) { self.param_list()? } else { Vec::new() };
        if self.tok_text() != "_" {
            return Err(self.unexpected("`_` in place of the function name in `.callprototype`"));
        }
        self.bump();
        let params = if self.at(TokenKind::LParen) { self.param_list()? } else { Vec::new() };
        let noreturn = self.at(TokenKind::Directive) && self.tok_text() == ".noreturn";
        if noreturn {
            self.bump();
        }
        self.expect(TokenKind::Semi, "`;` after `.callprototype`")?;
        Ok(CallPrototype { label, returns, params, noreturn, span: self.span_from(start) })
    }
}
