//! A stub HTTP server for the agent tests: reads each request's head and hands the connection to
//! the test's handler, which writes whatever answer (or half an answer) the test needs.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};

/// Serves on a free loopback port from a background thread; `answer(request_line, stream)` is
/// called once per connection after its head was read. Returns the port.
pub fn serve<F>(mut answer: F) -> std::io::Result<u16>
where
    F: FnMut(&str, TcpStream) + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let Ok(read_half) = stream.try_clone() else {
                continue;
            };
            let mut reader = BufReader::new(read_half);
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
            }
            answer(&first, stream);
        }
    });
    Ok(port)
}
