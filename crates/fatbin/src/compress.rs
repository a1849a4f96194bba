//! The two payload compressions, each bounded by the size the header promises.

use std::io::Read;

use crate::entry::Compression;
use crate::error::ErrorKind;

/// The most output one LZ4 block can produce per input byte (a length byte of 255 adds 255 bytes), plus
/// slack for the last sequence.
const LZ4_MAX_RATIO: u64 = 255;
const LZ4_SLACK: u64 = 64;

/// Decodes one raw LZ4 block of exactly `size` output bytes.
pub(crate) fn lz4(input: &[u8], size: u64) -> Result<Vec<u8>, ErrorKind> {
    let most = (input.len() as u64).saturating_mul(LZ4_MAX_RATIO).saturating_add(LZ4_SLACK);
    if size > most {
        return Err(ErrorKind::Corrupt {
            compression: Compression::Lz4,
            message: format!("{} compressed bytes cannot hold {size} uncompressed bytes", input.len()),
        });
    }
    let len = usize::try_from(size).map_err(|_| too_large(size))?;
    let mut out = vec![0; len];
    let written = lz4_flex::block::decompress_into(input, &mut out)
        .map_err(|e| ErrorKind::Corrupt { compression: Compression::Lz4, message: e.to_string() })?;
    if written as u64 != size {
        return Err(ErrorKind::WrongLength { compression: Compression::Lz4, expected: size, actual: written as u64 });
    }
    Ok(out)
}

/// Decodes ZSTD frames of exactly `size` output bytes. Output grows with what the frames really produce (at
/// most `size + 1` bytes are read), and the decoder's window is limited to what `size` needs, so a header
/// that lies costs no more memory than the data behind it.
pub(crate) fn zstd(input: &[u8], size: u64) -> Result<Vec<u8>, ErrorKind> {
    let corrupt = |e: std::io::Error| ErrorKind::Corrupt { compression: Compression::Zstd, message: e.to_string() };
    let mut decoder = zstd::stream::read::Decoder::with_buffer(input).map_err(corrupt)?;
    // Encoders that know the size use a window no larger than it; 2^23 covers levels up to 19 of those
    // that do not.
    let window_log = (u64::BITS - size.leading_zeros()).clamp(23, 27);
    decoder.window_log_max(window_log).map_err(corrupt)?;
    let mut out = Vec::with_capacity(usize::try_from(size.min(1 << 20)).unwrap_or(0));
    decoder.take(size.saturating_add(1)).read_to_end(&mut out).map_err(corrupt)?;
    if out.len() as u64 > size {
        return Err(ErrorKind::Corrupt {
            compression: Compression::Zstd,
            message: format!("it holds more than the {size} bytes the header says"),
        });
    }
    if out.len() as u64 != size {
        return Err(ErrorKind::WrongLength {
            compression: Compression::Zstd,
            expected: size,
            actual: out.len() as u64,
        });
    }
    Ok(out)
}

fn too_large(size: u64) -> ErrorKind {
    ErrorKind::TooLarge { size, limit: usize::MAX as u64 }
}
