//! The HTTP/1.1 server behind `llm.base_url()`, on a loopback port: one thread per connection.
//!
//! A client keeps its connection open between calls (keep-alive: reqwest for 90 s, ureq for
//! 15 s), so the thread reading a connection waits as long as the client keeps it. A pool of a
//! few threads is held by such idle connections; tiny_http's, used here before, also queued a
//! new connection behind the busy ones when two arrived at once. A case whose calls fan out
//! over several connections then waited for another client's idle connection to expire, 90 s
//! at a time. With a thread per connection an idle connection holds only its own thread.
//!
//! What it reads: HTTP/1.1 and 1.0 requests, a body by `Content-Length` or chunked,
//! `Expect: 100-continue`, keep-alive. What it writes: the status, the handler's headers, the
//! body with its `Content-Length`, or a stream as chunks (to an HTTP/1.0 client: until the
//! connection closes). A request it cannot read is answered 400 (431 for a head over 64 KiB)
//! and its connection closed.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// The longest request head (request line and headers) read; a longer one is answered 431.
const MAX_HEAD: usize = 64 * 1024;
/// The most headers a request may have; more are answered 431.
const MAX_HEADERS: usize = 128;
/// The size of each read of a streamed body, and so of the chunks it is sent in at most.
const CHUNK: usize = 16 * 1024;

/// What the server does with each request; it answers it, at once or from another thread.
pub type Handler = Arc<dyn Fn(Request) + Send + Sync>;

/// A request read whole (head and body). Answered with [`Request::respond`]; one dropped
/// unanswered is answered 500, so its client is never left waiting.
pub struct Request {
    /// `GET`, `POST`, ... as sent.
    pub method: String,
    /// The request target: path and query, as sent.
    pub url: String,
    /// The headers, names as sent, in order.
    pub headers: Vec<(String, String)>,
    /// The body, chunked encoding undone; empty when none was sent.
    pub body: Vec<u8>,
    answer: Option<Answer>,
}

/// An answer: status, headers (those of one connection, such as `Content-Length`, are the
/// server's own and left out) and body.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

/// A body whole, or read and sent as it comes.
pub enum Body {
    Bytes(Vec<u8>),
    Stream(Box<dyn Read + Send>),
}

/// Where a request's answer goes, and how its connection goes on.
struct Answer {
    stream: TcpStream,
    /// An HTTP/1.0 request: a stream is sent until the connection closes, not in chunks.
    old_version: bool,
    /// `HEAD`: the head only.
    head_only: bool,
    /// The client keeps the connection for another request.
    keep_alive: bool,
    /// Told, once the answer is written, whether the connection takes another request.
    written: mpsc::Sender<bool>,
}

/// Serves `listener` on a thread of its own, for as long as the process lives.
pub fn serve(listener: TcpListener, handler: Handler) -> io::Result<()> {
    std::thread::Builder::new()
        .name("proposal-eval-http".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else {
                    // Out of descriptors, say: wait for connections to close, not spin.
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let handler = handler.clone();
                let _ = std::thread::Builder::new()
                    .name("proposal-eval-http-connection".into())
                    .spawn(move || connection(stream, &handler));
            }
        })?;
    Ok(())
}

/// Takes one connection's requests, one after another, each answered before the next is read.
fn connection(stream: TcpStream, handler: &Handler) {
    // Each write is sent at once: a stream's events as they come, and no answer held back by
    // Nagle's algorithm for an acknowledgement the client delays (40 ms on Linux).
    let _ = stream.set_nodelay(true);
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::with_capacity(CHUNK, read_half);
    loop {
        let request = match read_request(&mut reader, &stream) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(refused) => {
                let _ = (&stream).write_all(refused.answer().as_bytes());
                close_after_refusal(&stream, reader);
                return;
            }
        };
        let (written, reusable) = mpsc::channel();
        let Ok(answer) = stream.try_clone() else {
            return;
        };
        let keep_alive = request.keep_alive;
        handler(Request {
            method: request.method,
            url: request.url,
            headers: request.headers,
            body: request.body,
            answer: Some(Answer {
                stream: answer,
                old_version: request.old_version,
                head_only: request.head_only,
                keep_alive,
                written,
            }),
        });
        if reusable.recv() != Ok(true) {
            return;
        }
    }
}

/// Closes a connection whose request was refused without losing the refusal: what the client
/// still sends is read and dropped (up to 1 MiB, for at most a second), since closing a socket
/// with unread bytes resets the connection, and the client may lose the answer with them.
fn close_after_refusal(stream: &TcpStream, reader: BufReader<TcpStream>) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(250)));
    let started = std::time::Instant::now();
    let mut rest = reader.take(1 << 20);
    let mut sink = [0; CHUNK];
    while started.elapsed() < Duration::from_secs(1) {
        match rest.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// A request as read, before it is handed over.
struct Incoming {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    old_version: bool,
    head_only: bool,
    keep_alive: bool,
}

/// Why a request could not be read: answered with this status, and the connection closed.
struct Refused {
    status: u16,
    why: String,
}

impl Refused {
    fn bad(why: impl Into<String>) -> Refused {
        Refused {
            status: 400,
            why: why.into(),
        }
    }

    fn answer(&self) -> String {
        format!(
            "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
            self.status,
            reason(self.status),
            self.why.len(),
            self.why
        )
    }
}

/// The next request of the connection; `None` when the client closed it between requests.
fn read_request(
    reader: &mut BufReader<TcpStream>,
    stream: &TcpStream,
) -> Result<Option<Incoming>, Refused> {
    let Some(head) = read_head(reader)? else {
        return Ok(None);
    };
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut slots);
    match parsed.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(Refused::bad("the request head is cut")),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Refused {
                status: 431,
                why: format!("more than {MAX_HEADERS} headers"),
            })
        }
        Err(e) => return Err(Refused::bad(format!("not an HTTP request: {e}"))),
    }
    let method = parsed.method.unwrap_or("GET").to_string();
    let url = parsed.path.unwrap_or("/").to_string();
    let old_version = parsed.version == Some(0);
    let headers: Vec<(String, String)> = parsed
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_string(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.to_ascii_lowercase())
    };
    let connection = find("connection").unwrap_or_default();
    let keep_alive = if old_version {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close") && !connection.contains("upgrade")
    };
    if !old_version && find("expect").is_some_and(|e| e.contains("100-continue")) {
        (&*stream)
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .map_err(|e| Refused::bad(e.to_string()))?;
    }
    let body = if find("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        read_chunked(reader)?
    } else if let Some(length) = find("content-length") {
        let length: u64 = length
            .trim()
            .parse()
            .map_err(|_| Refused::bad(format!("Content-Length `{length}` is not a number")))?;
        let mut body = Vec::new();
        reader
            .take(length)
            .read_to_end(&mut body)
            .map_err(|e| Refused::bad(format!("cannot read the body: {e}")))?;
        if body.len() as u64 != length {
            return Err(Refused::bad(format!(
                "the body ended after {} of its {length} bytes",
                body.len()
            )));
        }
        body
    } else {
        Vec::new()
    };
    Ok(Some(Incoming {
        head_only: method == "HEAD",
        method,
        url,
        headers,
        body,
        old_version,
        keep_alive,
    }))
}

/// The request line and headers up to the empty line that ends them, that line included;
/// `None` when the connection closed before a request began. Empty lines before the request
/// line are skipped, as RFC 9112 asks.
fn read_head(reader: &mut BufReader<TcpStream>) -> Result<Option<Vec<u8>>, Refused> {
    let mut head = Vec::with_capacity(1024);
    loop {
        let start = head.len();
        let read = (&mut *reader)
            .take((MAX_HEAD + 1 - head.len()) as u64)
            .read_until(b'\n', &mut head);
        match read {
            Ok(0) if head.is_empty() => return Ok(None),
            Ok(0) => {
                return Err(Refused::bad(
                    "the connection closed within the request head",
                ))
            }
            Ok(_) => {}
            Err(_) if head.is_empty() => return Ok(None),
            Err(e) => return Err(Refused::bad(format!("cannot read the request: {e}"))),
        }
        if head.len() > MAX_HEAD {
            return Err(Refused {
                status: 431,
                why: format!("the request head is over {MAX_HEAD} bytes"),
            });
        }
        let line = &head[start..];
        if line == b"\r\n" || line == b"\n" {
            if start == 0 {
                head.clear();
                continue;
            }
            return Ok(Some(head));
        }
    }
}

/// A chunked body, its chunks joined; trailers are read and dropped.
fn read_chunked(reader: &mut BufReader<TcpStream>) -> Result<Vec<u8>, Refused> {
    let mut body = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        read_line(reader, &mut line)?;
        let text = String::from_utf8_lossy(&line);
        let size = text.split(';').next().unwrap_or("").trim();
        let size = u64::from_str_radix(size, 16)
            .map_err(|_| Refused::bad(format!("`{size}` is not a chunk size")))?;
        if size == 0 {
            // Trailers, up to the empty line.
            loop {
                line.clear();
                read_line(reader, &mut line)?;
                if line.iter().all(|b| b.is_ascii_whitespace()) {
                    return Ok(body);
                }
            }
        }
        let before = body.len();
        (&mut *reader)
            .take(size)
            .read_to_end(&mut body)
            .map_err(|e| Refused::bad(format!("cannot read the body: {e}")))?;
        if (body.len() - before) as u64 != size {
            return Err(Refused::bad("the body ended within a chunk"));
        }
        line.clear();
        read_line(reader, &mut line)?;
    }
}

/// One line of a chunked body (a size, a chunk's end, a trailer), at most 4 KiB.
fn read_line(reader: &mut BufReader<TcpStream>, line: &mut Vec<u8>) -> Result<(), Refused> {
    match (&mut *reader).take(4096).read_until(b'\n', line) {
        Ok(0) => Err(Refused::bad("the connection closed within the body")),
        Ok(_) if line.ends_with(b"\n") => Ok(()),
        Ok(_) => Err(Refused::bad("a line of the chunked body is over 4 KiB")),
        Err(e) => Err(Refused::bad(format!("cannot read the body: {e}"))),
    }
}

impl Request {
    /// Writes the answer; the connection then takes the client's next request, unless it asked
    /// to close or the answer could not be written whole.
    pub fn respond(mut self, response: Response) -> io::Result<()> {
        match self.answer.take() {
            Some(answer) => answer.send(response),
            None => Ok(()),
        }
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        if let Some(answer) = self.answer.take() {
            let _ = answer.send(Response {
                status: 500,
                headers: Vec::new(),
                body: Body::Bytes(Vec::new()),
            });
        }
    }
}

impl Answer {
    fn send(self, response: Response) -> io::Result<()> {
        let written = self.write(response);
        let reusable = matches!(written, Ok(true));
        let _ = self.written.send(reusable);
        written.map(|_| ())
    }

    /// Writes the answer; whether the connection can take another request after it.
    fn write(&self, response: Response) -> io::Result<bool> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\n",
            response.status,
            reason(response.status)
        );
        for (name, value) in &response.headers {
            let own = [
                "connection",
                "content-length",
                "transfer-encoding",
                "keep-alive",
            ]
            .iter()
            .any(|n| name.eq_ignore_ascii_case(n));
            // A name or value that would end the line is not a header: left out.
            let breaks = |s: &str| s.bytes().any(|b| b == b'\r' || b == b'\n');
            if !own && !breaks(name) && !breaks(value) {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        let mut out = &self.stream;
        match response.body {
            Body::Bytes(bytes) => {
                head.push_str(&format!("Content-Length: {}\r\n", bytes.len()));
                if !self.keep_alive {
                    head.push_str("Connection: close\r\n");
                }
                head.push_str("\r\n");
                let mut all = head.into_bytes();
                if !self.head_only {
                    all.extend_from_slice(&bytes);
                }
                out.write_all(&all)?;
                Ok(self.keep_alive)
            }
            Body::Stream(mut body) => {
                let chunked = !self.old_version;
                let keep_alive = self.keep_alive && chunked;
                if chunked {
                    head.push_str("Transfer-Encoding: chunked\r\n");
                }
                if !keep_alive {
                    head.push_str("Connection: close\r\n");
                }
                head.push_str("\r\n");
                out.write_all(head.as_bytes())?;
                if self.head_only {
                    return Ok(keep_alive);
                }
                let mut buffer = vec![0; CHUNK];
                let mut chunk = Vec::with_capacity(CHUNK + 16);
                loop {
                    let n = match body.read(&mut buffer) {
                        Ok(0) => break,
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        // The body failed: the answer stops there, and so does the
                        // connection, so that the client sees it cut.
                        Err(e) => return Err(e),
                    };
                    chunk.clear();
                    if chunked {
                        chunk.extend_from_slice(format!("{n:x}\r\n").as_bytes());
                    }
                    chunk.extend_from_slice(&buffer[..n]);
                    if chunked {
                        chunk.extend_from_slice(b"\r\n");
                    }
                    out.write_all(&chunk)?;
                }
                if chunked {
                    out.write_all(b"0\r\n\r\n")?;
                }
                Ok(keep_alive)
            }
        }
    }
}

/// The reason phrase of a status; clients read the number.
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    /// A server whose handler echoes what it read: method, target, body, and the value of
    /// `x-probe`; a `/stream` target is answered as a stream of three pieces, `/drop` not at all.
    fn echo_server() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let handler: Handler = Arc::new(|request: Request| {
            let body = match request.url.as_str() {
                "/drop" => return,
                "/stream" => Body::Stream(Box::new(io::Cursor::new(b"one two three".to_vec()))),
                _ => Body::Bytes(
                    format!(
                        "{} {} [{}]",
                        request.method,
                        request.url,
                        String::from_utf8_lossy(&request.body)
                    )
                    .into_bytes(),
                ),
            };
            let _ = request.respond(Response {
                status: 200,
                headers: vec![
                    ("Content-Type".into(), "text/plain".into()),
                    ("X-Bad".into(), "a\r\nInjected: yes".into()),
                ],
                body,
            });
        });
        serve(listener, handler).unwrap();
        address
    }

    /// Sends `text` on a new connection, closes its sending side, and reads until the server
    /// closes it or 2 s pass without a byte.
    fn exchange(address: SocketAddr, text: &str) -> String {
        let mut stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        stream.write_all(text.as_bytes()).unwrap();
        // All is sent: a body shorter than its length ends here.
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn one_connection_takes_requests_one_after_another_until_the_client_closes() {
        let address = echo_server();
        let text = exchange(
            address,
            "POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello\
             GET /b?q=1 HTTP/1.1\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(
            text,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 15\r\n\r\nPOST /a [hello]\
             HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nGET /b?q=1 []",
            "a header value that would end its line is left out"
        );
    }

    #[test]
    fn a_chunked_body_is_joined_and_100_continue_is_answered_first() {
        let address = echo_server();
        let text = exchange(
            address,
            "POST /c HTTP/1.1\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
             3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n",
        );
        assert!(
            text.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"),
            "{text}"
        );
        assert!(text.ends_with("POST /c [abcde]"), "{text}");
    }

    #[test]
    fn a_stream_is_sent_in_chunks_and_to_an_http_1_0_client_until_the_connection_closes() {
        let address = echo_server();
        let text = exchange(address, "GET /stream HTTP/1.1\r\nConnection: close\r\n\r\n");
        assert!(
            text.contains("Transfer-Encoding: chunked\r\n")
                && text.ends_with("\r\n\r\nd\r\none two three\r\n0\r\n\r\n"),
            "{text}"
        );
        let text = exchange(address, "GET /stream HTTP/1.0\r\n\r\n");
        assert!(
            !text.contains("chunked")
                && text.contains("Connection: close\r\n")
                && text.ends_with("\r\n\r\none two three"),
            "{text}"
        );
    }

    #[test]
    fn a_request_the_handler_drops_is_answered_500() {
        let address = echo_server();
        let text = exchange(address, "GET /drop HTTP/1.1\r\nConnection: close\r\n\r\n");
        assert!(text.starts_with("HTTP/1.1 500 "), "{text}");
    }

    #[test]
    fn requests_it_cannot_read_are_answered_400_or_431_naming_why() {
        let address = echo_server();
        let text = exchange(address, "NOT HTTP\r\n\r\n");
        assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
        assert!(text.contains("not an HTTP request"), "{text}");
        let text = exchange(address, "POST / HTTP/1.1\r\nContent-Length: ten\r\n\r\n");
        assert!(
            text.ends_with("Content-Length `ten` is not a number"),
            "{text}"
        );
        let text = exchange(address, "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
        assert!(
            text.ends_with("the body ended after 3 of its 10 bytes"),
            "{text}"
        );
        let long = format!("GET / HTTP/1.1\r\nX-Long: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        let text = exchange(address, &long);
        assert!(text.starts_with("HTTP/1.1 431 "), "{text}");
    }

    /// An idle keep-alive connection holds only its own thread: a new connection is answered
    /// while 32 others are open and idle. (With a pool, the fault this server replaced, a new
    /// connection could wait behind idle ones until one expired.)
    #[test]
    fn idle_keep_alive_connections_do_not_hold_back_a_new_one() {
        let address = echo_server();
        let idle: Vec<TcpStream> = (0..32)
            .map(|_| {
                let mut stream = TcpStream::connect(address).unwrap();
                stream.write_all(b"GET /idle HTTP/1.1\r\n\r\n").unwrap();
                stream
            })
            .collect();
        let text = exchange(address, "GET /new HTTP/1.1\r\nConnection: close\r\n\r\n");
        assert!(text.ends_with("GET /new []"), "{text}");
        drop(idle);
    }
}
