//! The body of the server's responses: one ID kept inline (no allocation, nothing to free), or
//! bytes, sent whole in one frame with its exact length as `Full<Bytes>` would be; or a stream
//! of chunks written by a producer as the client reads them (`/cache`, `/db`), so an answer
//! about a million tags never sits whole in memory.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use hyper::body::{Frame, SizeHint};

/// Digits of the largest `u64`.
const MAX_DIGITS: usize = 20;

/// A response body; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Body {
    chunk: Option<Chunk>,
    /// Chunks still to come, and a failure that ends the stream early (the client then sees
    /// a broken answer, never a short one that looks whole).
    stream: Option<Box<tokio::sync::mpsc::Receiver<io::Result<Bytes>>>>,
}

/// How many chunks a producer may be ahead of the client (each about [`STREAM_CHUNK`] bytes).
const STREAM_DEPTH: usize = 2;
/// The size a streamed chunk is sent at.
pub(crate) const STREAM_CHUNK: usize = 64 * 1024;

/// Where a streamed body's producer writes (see [`Body::stream`]): `io::Write`, buffered into
/// chunks of [`STREAM_CHUNK`] bytes. A write fails once the client has gone away, which ends
/// the producer.
pub(crate) struct StreamWriter {
    tx: tokio::sync::mpsc::Sender<io::Result<Bytes>>,
    buf: Vec<u8>,
}

impl StreamWriter {
    fn send(&mut self, item: io::Result<Bytes>) -> io::Result<()> {
        self.tx
            .blocking_send(item)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))
    }

    /// Ends the stream with a failure: the client's connection is cut rather than the answer
    /// ending as if it were complete.
    pub(crate) fn fail(mut self, why: String) {
        let _ = self.send(Err(io::Error::other(why)));
    }

    /// Sends what is buffered and ends the stream.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        io::Write::flush(&mut self)
    }
}

impl io::Write for StreamWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= STREAM_CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(
            &mut self.buf,
            Vec::with_capacity(STREAM_CHUNK + 1024),
        ));
        self.send(Ok(chunk))
    }
}

/// The bytes of a [`Body`].
#[derive(Debug)]
pub(crate) struct Chunk(Repr);

#[derive(Debug)]
enum Repr {
    /// `digits[start..end]`.
    Inline {
        digits: [u8; MAX_DIGITS],
        start: u8,
        end: u8,
    },
    Bytes(Bytes),
}

impl Body {
    /// An ID in decimal, without a line end.
    pub(crate) fn id(id: u64) -> Body {
        // Two digits at a time from the end, straight into place.
        const PAIRS: &[u8; 200] = b"\
            0001020304050607080910111213141516171819\
            2021222324252627282930313233343536373839\
            4041424344454647484950515253545556575859\
            6061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899";
        let mut digits = [0u8; MAX_DIGITS];
        let mut start = MAX_DIGITS;
        let mut put = |start: usize, pair: usize| {
            if let (Some(to), Some(from)) =
                (digits.get_mut(start..start + 2), PAIRS.get(pair..pair + 2))
            {
                to.copy_from_slice(from);
            }
        };
        let mut n = id;
        while n >= 100 {
            let pair = (n % 100) as usize * 2;
            n /= 100;
            start -= 2;
            put(start, pair);
        }
        if n >= 10 {
            start -= 2;
            put(start, n as usize * 2);
        } else {
            start -= 1;
            if let Some(d) = digits.get_mut(start) {
                // n < 10.
                *d = b'0' + n as u8;
            }
        }
        Body {
            chunk: Some(Chunk(Repr::Inline {
                digits,
                // At most 20: both fit.
                start: start as u8,
                end: MAX_DIGITS as u8,
            })),
            stream: None,
        }
    }

    /// A body that `produce` writes on a blocking thread while the client reads it: at most
    /// [`STREAM_DEPTH`] chunks wait in memory. Must be called inside a tokio runtime.
    pub(crate) fn stream(produce: impl FnOnce(StreamWriter) + Send + 'static) -> Body {
        let (tx, rx) = tokio::sync::mpsc::channel(STREAM_DEPTH);
        tokio::task::spawn_blocking(move || {
            produce(StreamWriter {
                tx,
                buf: Vec::with_capacity(STREAM_CHUNK + 1024),
            })
        });
        Body {
            chunk: None,
            stream: Some(Box::new(rx)),
        }
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Body {
        Body::from(Bytes::from(bytes))
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Body {
        Body {
            // As `Full`: an empty body is the end of the stream at once.
            chunk: (!bytes.is_empty()).then_some(Chunk(Repr::Bytes(bytes))),
            stream: None,
        }
    }
}

impl Buf for Chunk {
    fn remaining(&self) -> usize {
        match &self.0 {
            Repr::Inline { start, end, .. } => usize::from(end - start),
            Repr::Bytes(b) => b.len(),
        }
    }

    fn chunk(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { digits, start, end } => digits
                .get(usize::from(*start)..usize::from(*end))
                .unwrap_or_default(),
            Repr::Bytes(b) => b,
        }
    }

    /// Past the end is the end (where `Bytes` would panic).
    fn advance(&mut self, cnt: usize) {
        match &mut self.0 {
            Repr::Inline { start, end, .. } => {
                let left = usize::from(*end - *start);
                // At most `end`: fits.
                *start += cnt.min(left) as u8;
            }
            Repr::Bytes(b) => b.advance(cnt.min(b.len())),
        }
    }
}

impl hyper::body::Body for Body {
    type Data = Chunk;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Chunk>, io::Error>>> {
        let this = self.get_mut();
        if let Some(c) = this.chunk.take() {
            return Poll::Ready(Some(Ok(Frame::data(c))));
        }
        let Some(rx) = this.stream.as_mut() else {
            return Poll::Ready(None);
        };
        match rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(bytes))) => {
                Poll::Ready(Some(Ok(Frame::data(Chunk(Repr::Bytes(bytes))))))
            }
            Poll::Ready(Some(Err(e))) => {
                this.stream = None;
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.stream = None;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.chunk.is_none() && self.stream.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match &self.stream {
            Some(_) => SizeHint::default(),
            None => SizeHint::with_exact(self.chunk.as_ref().map_or(0, |c| c.remaining() as u64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::io::Write;

    fn collect(body: Body) -> (Vec<u8>, Option<u64>) {
        let exact = hyper::body::Body::size_hint(&body).exact();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let bytes = rt.block_on(body.collect()).unwrap().to_bytes();
        (bytes.to_vec(), exact)
    }

    #[test]
    fn an_id_is_its_decimal_digits_with_their_exact_length() {
        let mut ids = vec![
            0,
            1,
            9,
            10,
            99,
            100,
            101,
            1234,
            2124556629465632814,
            u64::MAX,
        ];
        ids.extend((0..64).map(|b| 1u64 << b));
        ids.extend((1..20).flat_map(|e| {
            let p = 10u64.pow(e);
            [p - 1, p, p + 1]
        }));
        for id in ids {
            let text = id.to_string();
            assert_eq!(
                collect(Body::id(id)),
                (text.clone().into_bytes(), Some(text.len() as u64))
            );
        }
    }

    #[test]
    fn a_stream_arrives_in_order_and_a_failure_breaks_it() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let whole = rt.block_on(async {
            let body = Body::stream(|mut w| {
                for i in 0..50_000u32 {
                    let _ = writeln!(w, "{i}");
                }
                let _ = w.finish();
            });
            body.collect().await.unwrap().to_bytes()
        });
        let text = String::from_utf8(whole.to_vec()).unwrap();
        assert_eq!(text.lines().count(), 50_000);
        assert_eq!(text.lines().last(), Some("49999"));
        let broken = rt.block_on(async {
            Body::stream(|mut w| {
                let _ = w.write_all(b"[1,");
                w.fail("the database went away".into());
            })
            .collect()
            .await
        });
        assert_eq!(broken.unwrap_err().to_string(), "the database went away");
    }

    #[test]
    fn bytes_are_sent_as_given_and_empty_is_the_end() {
        assert_eq!(
            collect(Body::from(b"ok\n".to_vec())),
            (b"ok\n".to_vec(), Some(3))
        );
        let empty = Body::from(Vec::new());
        assert!(hyper::body::Body::is_end_stream(&empty));
        assert_eq!(collect(empty), (Vec::new(), Some(0)));
    }

    #[test]
    fn a_chunk_advances_to_its_end_and_no_further() {
        let Some(mut c) = Body::id(12345).chunk else {
            panic!("no chunk")
        };
        c.advance(2);
        assert_eq!(c.chunk(), b"345");
        assert_eq!(c.remaining(), 3);
        c.advance(10);
        assert_eq!((c.remaining(), c.chunk()), (0, &b""[..]));
        let mut b = Chunk(Repr::Bytes(Bytes::from_static(b"abc")));
        b.advance(5);
        assert_eq!(b.remaining(), 0);
    }
}
