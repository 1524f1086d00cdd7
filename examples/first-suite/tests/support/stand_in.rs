//! The guide's stand-in model (`tests/live_model/stand_in.rs`) as an OpenAI-compatible chat
//! completions server, on a loopback port of this process: what `docs::live_model_talks_to_a_server`
//! sends the guide's HTTP client to.

use crate::live_model::stand_in::answer;
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
