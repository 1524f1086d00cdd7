//! What a caught panic said, for the failure message of a case or of the live model.

/// The message of a panic payload (`panic!("...")` gives a `&str` or a `String`).
pub(crate) fn message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_string()
    }
}
