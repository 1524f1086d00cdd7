//! The `#[proposal_eval]` attribute macro: one `#[test]` per fixture file. Use it through the
//! `proposal-eval` crate, which re-exports it and documents it.
//!
//! The macro does as little as it can: it finds the fixtures when the crate compiles and writes,
//! per fixture, a `#[test]` that calls one function of the runtime. Everything else (parsing,
//! recordings, evaluation) happens at run time in the runtime, exactly as in the harness.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote, quote_spanned};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::{parse_macro_input, Expr, ItemFn, Lit, LitStr};

use proposal_eval_naming as naming;

mod json;

/// One `#[test]` per fixture file of a suite folder.
///
/// ```ignore
/// use proposal_eval::{proposal_eval, Case, Llm};
///
/// #[proposal_eval(fixtures = "fixtures/payments", model = crate::live_model)]
/// fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<serde_json::Value>> {
///     let reply = llm.complete(&serde_json::json!({ "prompt": case.input["message"] }))?;
///     Ok(serde_json::from_value(reply["proposals"].clone())?)
/// }
/// ```
///
/// | argument | meaning |
/// |---|---|
/// | `fixtures = "dir"` | required: the suite folder, relative to the crate root |
/// | `config = "file"` | the suite config, instead of `<suite>/proposal-eval.toml` |
/// | `recordings = "dir"` | the recordings folder, instead of `<suite>/recordings` |
/// | `model = path` | a `fn() -> impl Model`, called only when a case records |
/// | `judge = path` | a `fn() -> impl Model`: the rubric judge, instead of `[judge]`'s OpenAI-compatible one; called only when verdicts are recorded |
///
/// The function takes `(&Case, &mut Llm)` and returns `Vec<T: Serialize>`, `serde_json::Value`
/// or a `Result` of either. It may be `async fn`, driven on the test's thread: with the runtime's
/// `tokio` feature on a current-thread tokio runtime made for the test (so tokio's timers,
/// `tokio::spawn` and clients such as reqwest work), without it on a minimal executor that has
/// no timers and no I/O, where a case that uses tokio fails saying to turn the feature on. The
/// tests land in a module named after the
/// suite folder: `payments::raise_amount`. Each fixture file is included in the build, so editing
/// one rebuilds; for a *new* file to rebuild the tests, add a `build.rs` with
/// `println!("cargo:rerun-if-changed=fixtures");` (or use the run-time `Harness`, which needs no
/// rebuild). A wrong argument, a missing folder, a folder without fixtures or a function of the
/// wrong shape is a compile error on the argument.
#[proc_macro_attribute]
pub fn proposal_eval(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function = parse_macro_input!(item as ItemFn);
    let mut args = Args::default();
    let parser = syn::meta::parser(|meta| args.parse(meta));
    if let Err(error) = syn::parse::Parser::parse(parser, attr) {
        let error = error.to_compile_error();
        return quote!(#function #error).into();
    }
    match expand(args, &function) {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            let error = error.to_compile_error();
            quote!(#function #error).into()
        }
    }
}

#[derive(Default)]
struct Args {
    fixtures: Option<LitStr>,
    config: Option<LitStr>,
    recordings: Option<LitStr>,
    model: Option<syn::Path>,
    judge: Option<syn::Path>,
}

impl Args {
    fn parse(&mut self, meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
        let string = |meta: &syn::meta::ParseNestedMeta| -> syn::Result<LitStr> {
            let value: Expr = meta.value()?.parse()?;
            match value {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(s), ..
                }) => Ok(s),
                other => Err(syn::Error::new(
                    other.span(),
                    "expected a string literal: a path relative to the crate root",
                )),
            }
        };
        if meta.path.is_ident("fixtures") {
            self.fixtures = Some(string(&meta)?);
        } else if meta.path.is_ident("config") {
            self.config = Some(string(&meta)?);
        } else if meta.path.is_ident("recordings") {
            self.recordings = Some(string(&meta)?);
        } else if meta.path.is_ident("model") {
            self.model = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("judge") {
            self.judge = Some(meta.value()?.parse()?);
        } else {
            let name = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_else(|| "this".into());
            return Err(meta.error(format!(
                "unknown argument `{name}`; the arguments are fixtures = \"folder\" (required), config = \"file\", recordings = \"folder\", model = path::to::fn, judge = path::to::fn"
            )));
        }
        Ok(())
    }
}

fn crate_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// What the macro needs of a fixture file: whether it is marked non-active, and whether it can be
/// tracked as a doc string ([`track`]).
struct FixtureFacts {
    ignored: bool,
    doc: bool,
}

/// The largest fixture tracked as a doc string. rustc holds a doc string more than once: a
/// 70 MB fixture took 449 MB to compile as one, 383 MB as a `const` (360 MB untracked).
const DOC_TRACKED_MAX: usize = 1 << 20;

impl FixtureFacts {
    fn read(file: &Path) -> FixtureFacts {
        match std::fs::read(file).map(String::from_utf8) {
            Ok(Ok(text)) => FixtureFacts {
                ignored: ignored(&text),
                doc: text.len() <= DOC_TRACKED_MAX,
            },
            // Not UTF-8 (the runtime reports the fixture's error as a failing test), or not
            // readable (including it names the file in a compile error).
            _ => FixtureFacts {
                ignored: false,
                doc: false,
            },
        }
    }
}

/// Whether a fixture is marked non-active. A fixture that does not parse is not ignored, so the
/// runtime reports its error as a failing test.
///
/// Only a well-formed fixture (known keys only) with a known non-active status is ignored: a typo
/// in `status` or anywhere else must fail the test, as the harness does, never turn it off.
fn ignored(text: &str) -> bool {
    // A byte order mark is accepted, as the runtime's parser does.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Most fixtures set no status: found without parsing them (the macro runs unoptimized, and a
    // parse of every fixture is most of its time). A key written with escapes is parsed.
    if !text.contains("status") && !text.contains("\\u") {
        return false;
    }
    let Some(entries) = json::top_level(text) else {
        return false;
    };
    if entries
        .iter()
        .any(|(key, _)| !naming::FIXTURE_KEYS.contains(&key.as_str()))
    {
        return false;
    }
    // A key given twice is refused by the runtime's parser: a failing test, not an ignored one.
    let mut statuses = entries.iter().filter(|(key, _)| key == "status");
    match (statuses.next(), statuses.next()) {
        (Some((_, Some(status))), None) => matches!(status.as_str(), "draft" | "needs_human_input"),
        _ => false,
    }
}

/// Makes `file` a dependency of the build, so editing it rebuilds the tests: a proc macro has no
/// stable way to say so but to include the file. Returns an attribute for the test function and
/// a statement for its body.
///
/// A UTF-8 file of up to [`DOC_TRACKED_MAX`] bytes is included as the test function's doc
/// string, the cheapest inclusion for rustc: no item of its own to type-check and evaluate (a
/// `const` per fixture cost a third of the 1,000-fixture build, `bench/macro-compile`). Any
/// other file is included as the length of its bytes.
fn track(file: &Path, doc: bool) -> (Tokens, Tokens) {
    let file = file.to_string_lossy().into_owned();
    if doc {
        (quote!(#[doc = include_str!(#file)]), Tokens::new())
    } else {
        (
            Tokens::new(),
            quote!(
                const _: usize = include_bytes!(#file).len();
            ),
        )
    }
}

#[derive(Default)]
struct Module {
    /// Per test: its name, its fixture's path relative to the suite, what the macro read.
    tests: Vec<(String, String, FixtureFacts)>,
    children: BTreeMap<String, Module>,
}

/// The tests of `found` (fixture paths relative to the suite folder `dir`) as nested modules, by
/// their path's segments; two fixtures that would be the same test are an error at `span`.
fn test_tree(found: &[String], dir: &Path, span: Span) -> syn::Result<Module> {
    let mut tree = Module::default();
    let mut seen: BTreeMap<Vec<String>, String> = BTreeMap::new();
    for relative in found {
        let segments = naming::case_segments(relative);
        if let Some(other) = seen.insert(segments.clone(), relative.clone()) {
            return Err(syn::Error::new(
                span,
                format!("the fixtures `{other}` and `{relative}` would both be the test `{}`; rename one", segments.join("::")),
            ));
        }
        let (leaf, parents) = segments.split_last().expect("a path has a file name");
        let mut node = &mut tree;
        for parent in parents {
            node = node.children.entry(parent.clone()).or_default();
        }
        node.tests.push((
            leaf.clone(),
            relative.clone(),
            FixtureFacts::read(&dir.join(relative)),
        ));
    }
    Ok(tree)
}

/// Per fixture, the least code: a `#[test]` that passes its path to the suite's one `__run`,
/// a plain function, so the runtime's generic `run` is instantiated and type-checked once per
/// suite, not once per fixture.
fn module_tokens(module: &Module, depth: usize, dir: &Path) -> Tokens {
    let supers: Tokens = (0..depth).map(|_| quote!(super::)).collect();
    let mut out = Tokens::new();
    for (leaf, relative, facts) in &module.tests {
        let test = format_ident!("{}", leaf);
        let (doc, track) = track(&dir.join(relative), facts.doc);
        // A bare #[ignore], as the harness gives (libtest-mimic has no reason), so both
        // front ends print the same line.
        let ignore = facts.ignored.then(|| quote!(#[ignore]));
        out.extend(quote! {
            #doc
            #[test]
            #ignore
            fn #test() {
                #track
                #supers __run(#relative)
            }
        });
    }
    for (child, module) in &module.children {
        let child_ident = format_ident!("{}", child);
        let body = module_tokens(module, depth + 1, dir);
        out.extend(quote! {
            mod #child_ident {
                #body
            }
        });
    }
    out
}

fn expand(args: Args, function: &ItemFn) -> syn::Result<Tokens> {
    let fixtures = args.fixtures.ok_or_else(|| {
        syn::Error::new(
            Span::call_site(),
            "missing argument `fixtures = \"folder\"`: the suite folder, relative to the crate root",
        )
    })?;
    if function.sig.inputs.len() != 2 {
        return Err(syn::Error::new(
            function.sig.inputs.span(),
            "a proposal_eval function takes two arguments: `fn name(case: &Case, llm: &mut Llm) -> T`",
        ));
    }
    let root = crate_root();
    let dir = root.join(fixtures.value());
    if !dir.is_dir() {
        return Err(syn::Error::new(
            fixtures.span(),
            format!(
                "the fixtures folder `{}` does not exist; the path is relative to the crate root (the folder of Cargo.toml)",
                fixtures.value(),
            ),
        ));
    }
    let recordings_dir = match &args.recordings {
        Some(r) => root.join(r.value()),
        None => dir.join("recordings"),
    };
    let found = naming::fixture_files(&dir, &recordings_dir).map_err(|e| {
        syn::Error::new(
            fixtures.span(),
            format!("cannot read the fixtures folder: {e}"),
        )
    })?;
    if found.is_empty() {
        return Err(syn::Error::new(
            fixtures.span(),
            format!(
                "the fixtures folder `{}` holds no fixture (*.json); add one file per case",
                fixtures.value()
            ),
        ));
    }
    let config_file = match &args.config {
        Some(c) => {
            let file = root.join(c.value());
            if !file.is_file() {
                return Err(syn::Error::new(
                    c.span(),
                    format!("the config file `{}` does not exist; the path is relative to the crate root", c.value()),
                ));
            }
            Some(file)
        }
        None => Some(dir.join(naming::CONFIG_FILE)).filter(|f| f.is_file()),
    };

    let tree = test_tree(&found, &dir, fixtures.span())?;

    let name = &function.sig.ident;
    let is_async = function.sig.asyncness.is_some();
    let fixtures_value = fixtures.value();
    let config = match &args.config {
        Some(c) => {
            let v = c.value();
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    };
    let recordings = match &args.recordings {
        Some(r) => {
            let v = r.value();
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    };
    let boxed = |path: &Option<syn::Path>| match path {
        Some(path) => {
            quote!(::core::option::Option::Some(|| ::proposal_eval::__macro_support::boxed_model(#path())))
        }
        None => quote!(::core::option::Option::None),
    };
    let (model, judge) = (boxed(&args.model), boxed(&args.judge));
    let config_track = config_file.map(|f| {
        let file = f.to_string_lossy().into_owned();
        quote!(
            const _: usize = include_bytes!(#file).len();
        )
    });
    let suite_ident = format_ident!(
        "{}",
        naming::identifier(
            &dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        )
    );

    let body = module_tokens(&tree, 0, &dir);
    let call = if is_async {
        quote!(|case: &::proposal_eval::Case, llm: &mut ::proposal_eval::Llm| ::proposal_eval::__macro_support::block_on(super::#name(case, llm)))
    } else {
        quote!(super::#name)
    };

    // Checked in every build, not only under cfg(test), so a wrong signature is an error where
    // the function is written.
    let output_span = match &function.sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => function.sig.ident.span(),
    };
    let check = if is_async {
        quote_spanned!(output_span=> ::proposal_eval::__macro_support::check_signature(|case: &::proposal_eval::Case, llm: &mut ::proposal_eval::Llm| ::proposal_eval::__macro_support::block_on(#name(case, llm))))
    } else {
        quote_spanned!(output_span=> ::proposal_eval::__macro_support::check_signature(#name))
    };
    Ok(quote! {
        #function

        #[allow(dead_code)]
        const _: fn() = || {
            #check;
        };

        #[cfg(test)]
        #[allow(non_snake_case)]
        mod #suite_ident {
            #[allow(unused_imports)]
            use super::*;
            #config_track
            static __SUITE: ::proposal_eval::__macro_support::MacroSuite =
                ::proposal_eval::__macro_support::MacroSuite {
                    crate_root: env!("CARGO_MANIFEST_DIR"),
                    fixtures: #fixtures_value,
                    config: #config,
                    recordings: #recordings,
                    model: #model,
                    judge: #judge,
                };
            fn __run(relative: &'static str) {
                ::proposal_eval::__macro_support::run(&__SUITE, relative, #call)
            }
            #body
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_draft_with_a_byte_order_mark_is_ignored_as_the_harness_does() {
        assert!(super::ignored("\u{feff}{\"status\": \"draft\"}"));
        assert!(!super::ignored("\u{feff}{\"status\": \"active\"}"));
        assert!(!super::ignored(
            "\u{feff}{\"status\": \"draft\", \"typo\": 1}"
        ));
    }

    #[test]
    fn a_draft_ignored_only_when_the_runtime_would_read_it() {
        assert!(super::ignored(
            "{\"input\": {\"status\": 1}, \"status\": \"needs_human_input\"}"
        ));
        assert!(super::ignored("{\"st\\u0061tus\": \"draft\"}"));
        // Not JSON, a status twice (the runtime's parser refuses both), a status not a string.
        assert!(!super::ignored("{\"status\": \"draft\",}"));
        assert!(!super::ignored(
            "{\"status\": \"draft\", \"status\": \"draft\"}"
        ));
        assert!(!super::ignored("{\"status\": [\"draft\"]}"));
        assert!(!super::ignored("{\"status\": \"active\"}"));
    }
}
