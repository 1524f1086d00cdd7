//! A loopback stand-in for the accounts service the agent reads: two customers and their orders,
//! served by wiremock on an OS-chosen port of 127.0.0.1. Any other path is a 404.

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// `(id, account, orders)` of every customer the service knows.
fn customers() -> Vec<(&'static str, Value, Value)> {
    vec![
        (
            "c-17",
            json!({ "id": "c-17", "name": "Ana", "email": "ana@example.com", "plan": "pro" }),
            json!([
                { "id": "o-1001", "amount": 49.9, "chargedTwice": true },
                { "id": "o-0990", "amount": 12.5, "chargedTwice": false },
            ]),
        ),
        (
            "c-42",
            json!({ "id": "c-42", "name": "Maria", "email": "maria.old@example.com", "plan": "basic" }),
            json!([]),
        ),
    ]
}

/// Starts the service; it stops when the returned server is dropped.
pub async fn start() -> MockServer {
    let server = MockServer::start().await;
    for (id, account, orders) in customers() {
        Mock::given(method("GET"))
            .and(path(format!("/accounts/{id}")))
            .respond_with(ResponseTemplate::new(200).set_body_json(account))
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("/accounts/{id}/orders")))
            .respond_with(ResponseTemplate::new(200).set_body_json(orders))
            .mount(&server)
            .await;
    }
    server
}
