//! corpus/cuda/rdc_linkage.cu: linkage. The whole-program variants (O3/lineinfo/G) define every function
//! and variable and run; their results are compared exactly (`x * x + 7` follows the variant's contraction).
//! The `-rdc=true` variant leaves `ext_transform` and `ext_counter` `.extern` (defined in another translation
//! unit): a backend must refuse the kernel with `ErrorKind::Unsupported` naming the missing function.

use conformance::prelude::*;
use conformance::Flavor;

const SRC: &str = "rdc_linkage";

#[test]
fn rdc_kernel() {
    let (grid, block) = (2usize, 64usize);
    let n = grid * block;
    let data = Rng::new(1300).vec_f32(n, -10.0, 10.0);
    let args = vec![Arg::input(&data), Arg::output::<i32>(n)];
    let case = Case::new("rdc_kernel", Shape::linear(grid as u32, block as u32), args, move |ctx| {
        if ctx.variant.flavor == Flavor::Rdc {
            return Expect::Unsupported(vec!["_Z13ext_transformf".to_string(), "declared but not defined".to_string()]);
        }
        // shared_helper(x) = x * x + internal_state (7); ext_transform(y) = y * 0.5; weak_tmpl(1.0f) = 1 + 5
        let out: Vec<f32> = data.iter().map(|&x| ctx.variant.mad(x, x, 7.0) * 0.5 + 6.0).collect();
        let counts: Vec<i32> = (0..n as i32).map(|i| (i + 5) ^ 7).collect();
        Expect::Outputs(vec![
            Check::exact(0, "data", Values::F32(out)),
            Check::exact(1, "counts", Values::I32(counts)),
            Check::symbol("ext_counter", Values::I32(vec![n as i32]), Rule::All(Tol::Exact)),
        ])
    })
    .read_symbol("ext_counter");
    check(SRC, case);
}
