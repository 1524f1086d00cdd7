//! The live model: an OpenAI-compatible chat completions endpoint, called with ureq (a blocking
//! HTTP client), or without a key the stand-in of `stand_in.rs`. proposal-eval builds it only
//! when a case records; a replay never does.

pub mod stand_in;

use proposal_eval::{Model, ModelError};
use serde_json::Value;
use std::time::Duration;

pub struct ChatCompletions {
    agent: ureq::Agent,
    url: String,
    key: String,
}

impl ChatCompletions {
    pub fn new(base_url: &str, key: &str) -> ChatCompletions {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(60)))
            .build();
        ChatCompletions {
            agent: config.into(),
            url: format!("{base_url}/chat/completions"),
            key: key.to_string(),
        }
    }
}

impl Model for ChatCompletions {
    fn complete(&self, request: &Value) -> Result<Value, ModelError> {
        let mut response = self
            .agent
            .post(&self.url)
            .header("Authorization", &format!("Bearer {}", self.key))
            .send_json(request)
            .map_err(ModelError::from_error)?;
        response
            .body_mut()
            .read_json()
            .map_err(ModelError::from_error)
    }
}

/// The model to record with: `OPENAI_API_KEY`, and `OPENAI_BASE_URL` for another endpoint;
/// without a key, the stand-in, which answers offline.
pub fn openai() -> Box<dyn Model> {
    let Ok(key) = std::env::var("OPENAI_API_KEY") else {
        return Box::new(stand_in::model());
    };
    let base_url = std::env::var("OPENAI_BASE_URL")
        .unwrap_or_else(|_| "https://api.openai.com/v1".to_string());
    Box::new(ChatCompletions::new(&base_url, &key))
}
