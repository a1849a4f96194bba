//! corpus/cuda/tex_surf.cu: texture and surface instructions, which the emulator does not implement. Each
//! kernel must be refused before it runs with `ErrorKind::Unsupported`, naming every unsupported
//! instruction family with its PTX line — never skipped silently.

use conformance::prelude::*;

const SRC: &str = "tex_surf";

#[test]
fn tex_fetches() {
    // six texture objects (opaque 64-bit handles), then out and iout
    let mut args: Vec<Arg> = (1..=6u64).map(Arg::scalar).collect();
    args.push(Arg::output::<f32>(64));
    args.push(Arg::output::<i32>(128));
    let case = Case::new("tex_fetches", Shape::linear(1, 64), args, |_| {
        Expect::Unsupported(
            ["`tex` is not implemented", "`tld4` is not implemented", "`txq` is not implemented"]
                .map(String::from)
                .to_vec(),
        )
    });
    check(SRC, case);
}

#[test]
fn surf_rw() {
    let args = vec![Arg::scalar(1u64), Arg::scalar(2u64), Arg::scalar(3u64), Arg::scalar(16i32), Arg::scalar(8i32)];
    let case = Case::new("surf_rw", Shape::new((2, 1, 1), (8, 8, 1)), args, |_| {
        Expect::Unsupported(
            ["`suld` is not implemented", "`sust` is not implemented", "`suq` is not implemented"]
                .map(String::from)
                .to_vec(),
        )
    });
    check(SRC, case);
}
