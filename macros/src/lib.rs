//! The `#[proposal_eval]` attribute macro. Use it through the `proposal-eval` crate.
use proc_macro::TokenStream;

/// One `#[test]` per fixture file; see the `proposal-eval` crate.
#[proc_macro_attribute]
pub fn proposal_eval(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
