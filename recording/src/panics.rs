//! What a caught panic said, for the failure message of a case or of the live model.

/// The message of a panic payload (`panic!("...")` gives a `&str` or a `String`).
pub fn message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::message;

    #[test]
    fn the_message_of_every_kind_of_payload() {
        // `panic!("literal")` carries a `&str`, `panic!("{x}")` a `String`, `panic_any` anything.
        let of = |f: fn()| message(&*std::panic::catch_unwind(f).unwrap_err());
        let literal = of(|| panic!("a literal"));
        let formatted = of(|| panic!("formatted {}", 42));
        let other = of(|| std::panic::panic_any(42_u8));
        assert_eq!(literal, "a literal");
        assert_eq!(formatted, "formatted 42");
        assert_eq!(other, "(a panic without a message)");
    }
}
