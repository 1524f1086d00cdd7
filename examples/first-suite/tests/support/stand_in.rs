//! A stand-in for an OpenAI-compatible chat completions server, on a loopback port of this
//! process: a few keyword rules instead of a model. This repository records the first-suite
//! cases against it, so they can be re-recorded offline (see tests/docs.rs); a real suite records
//! against its real model.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

/// Starts the server on a free loopback port; returns its base URL (`http://127.0.0.1:N/v1`).
/// It serves until the process exits.
pub fn start() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let base_url = format!("http://{}/v1", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    Ok(base_url)
}

/// The answer to one chat completion request: the message's first number becomes the new
/// payment amount. Like some real models, it quotes an amount written with decimals ("85.50").
pub fn answer(request: &Value) -> Value {
    let message = request["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let amount = message
        .split_whitespace()
        .find(|word| word.parse::<f64>().is_ok());
    let proposals = match amount {
        Some(word) => {
            let new_value = match word.parse::<i64>() {
                Ok(whole) => json!(whole),
                Err(_) => json!(word),
            };
            json!([{ "changeType": "change", "changedField": "payment.amount", "newValue": new_value }])
        }
        None => json!([]),
    };
    json!({
        "id": "chatcmpl-stand-in",
        "object": "chat.completion",
        "model": "stand-in",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": json!({ "proposals": proposals }).to_string() },
            "finish_reason": "stop",
        }],
    })
}

fn serve(stream: TcpStream) {
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    let mut length = 0;
    let mut authorized = false;
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => return,
            Ok(_) if header.trim().is_empty() => break,
            Ok(_) => {}
        }
        let (name, value) = header.split_once(':').unwrap_or((&header, ""));
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().unwrap_or(0),
            "authorization" => authorized = value.trim().starts_with("Bearer "),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let (status, reply) = match serde_json::from_slice::<Value>(&body) {
        _ if !request_line.contains(" /v1/chat/completions ") => ("404 Not Found", json!({})),
        _ if !authorized => ("401 Unauthorized", json!({ "error": "no bearer token" })),
        Ok(request) => ("200 OK", answer(&request)),
        Err(_) => (
            "400 Bad Request",
            json!({ "error": "the body is not JSON" }),
        ),
    };
    let reply = reply.to_string();
    let _ = write!(
        &stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
        reply.len()
    );
    let _ = (&stream).flush();
}
