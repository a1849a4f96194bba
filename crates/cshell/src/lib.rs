//! `#[cshell::export]`, the attribute every function that lockstep's CUDA libraries (`cudart`, `cudadrv`,
//! `nvjitlink`) export to C programs carries instead of `#[no_mangle]`.
//!
//! A Rust panic cannot unwind out of an `extern "C"` function: the process aborts, taking the user's program
//! down for what is a lockstep bug. The attribute exports the function unmangled and runs its body under
//! `catch_unwind`; a panic (whose message and location the panic hook has already printed) becomes the
//! value the crate's `abi::Fallback` trait gives for the return type — `cudaErrorUnknown`,
//! `CUDA_ERROR_UNKNOWN`, `NVJITLINK_ERROR_INTERNAL`, a null pointer — with one line naming the function and
//! what it returned. The program goes on and can report the error as it reports any other.
//!
//! Each crate defines `crate::abi::Fallback` (`fn fallback() -> Self` and `const NAME: &str`) for the
//! return types of its functions: the same C type (`i32`) means a different error code in each library.

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, ItemFn, ReturnType};

/// Exports the function under its own name, with panics turned into the crate's `abi::Fallback` value.
#[proc_macro_attribute]
pub fn export(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        return syn::Error::new(proc_macro2::Span::call_site(), "#[export] takes no arguments")
            .to_compile_error()
            .into();
    }
    let ItemFn { attrs, vis, sig, block } = parse_macro_input!(item as ItemFn);
    if sig.abi.is_none() {
        return syn::Error::new_spanned(&sig, "#[export] is for `extern \"C\"` functions").to_compile_error().into();
    }
    let name = sig.ident.to_string();
    let ret = match &sig.output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, t) => quote!(#t),
    };
    quote! {
        #(#attrs)*
        #[no_mangle]
        #vis #sig {
            // The body's own `return`s and `?`s now leave the closure, which returns what the function did.
            match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(move || -> #ret #block)) {
                ::std::result::Result::Ok(r) => r,
                ::std::result::Result::Err(_) => {
                    ::std::eprintln!(
                        "lockstep: {} failed inside lockstep (the panic above is a lockstep bug; please report it); \
                         it returns {} to the program",
                        #name,
                        <#ret as crate::abi::Fallback>::NAME,
                    );
                    <#ret as crate::abi::Fallback>::fallback()
                }
            }
        }
    }
    .into()
}
