//! Every exported CUDA function lockstep does not implement (listed in `cuda::unsupported`): it returns
//! `cudaErrorNotSupported`, records it as the last error and warns once, naming itself. The functions take
//! no parameters here; under the C calling convention the caller's arguments are simply not read.

use crate::abi::cudaError_t;
use crate::cuda;

macro_rules! stubs {
    ($($name:ident),* $(,)?) => {
        $(
            #[cshell::export]
            pub extern "C" fn $name() -> cudaError_t {
                let c = cuda();
                let e = c.unsupported(stringify!($name));
                c.record::<()>(Err(e)).err().map_or(0, |e| e.code())
            }
        )*
    };
}

cuda::for_each_unsupported_runtime_function!(stubs);
