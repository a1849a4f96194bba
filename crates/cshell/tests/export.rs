//! A panic inside an exported function returns the crate's fallback value; the process goes on.

mod abi {
    pub trait Fallback {
        const NAME: &'static str;
        fn fallback() -> Self;
    }

    impl Fallback for i32 {
        const NAME: &'static str = "cudaErrorUnknown";
        fn fallback() -> i32 {
            999
        }
    }

    impl Fallback for () {
        const NAME: &'static str = "nothing";
        fn fallback() {}
    }
}

/// Panics when `fail` is non-zero; otherwise returns early or at its end as told.
#[cshell::export]
pub extern "C" fn lockstep_cshell_test_function(fail: i32, early: i32) -> i32 {
    if fail != 0 {
        panic!("a deliberate panic");
    }
    if early != 0 {
        return 7;
    }
    let r: Result<i32, i32> = Err(3);
    match r {
        Ok(v) => v,
        Err(e) => e,
    }
}

/// # Safety
/// `out` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn lockstep_cshell_test_unsafe(out: *mut i32, mut n: i32) {
    n += 1;
    if n > 10 {
        panic!("too large");
    }
    // SAFETY: the caller's promise.
    unsafe { out.write(n) };
}

#[test]
fn a_panic_returns_the_fallback() {
    assert_eq!(lockstep_cshell_test_function(0, 1), 7);
    assert_eq!(lockstep_cshell_test_function(0, 0), 3);
    assert_eq!(lockstep_cshell_test_function(1, 0), 999);
    let mut out = 0;
    // SAFETY: `out` is a local.
    unsafe { lockstep_cshell_test_unsafe(&mut out, 4) };
    assert_eq!(out, 5);
    // SAFETY: as above; the panic leaves `out` alone.
    unsafe { lockstep_cshell_test_unsafe(&mut out, 40) };
    assert_eq!(out, 5);
}
