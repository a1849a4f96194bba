//! PTX front end: lexer, parser, AST, printer and diagnostics.
//!
//! This crate depends on nothing else in the workspace. [`parse`] turns PTX text into an [`ast::Module`] that
//! borrows from the text, or into a list of [`Diagnostic`]s; it never panics, whatever the input.

pub mod ast;
pub mod keywords;
