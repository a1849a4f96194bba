//! corpus/cuda/cpp_features.cu: mangled template/overload/namespace kernels, launch bounds, structs passed
//! by value (with pointers inside, and 16-byte aligned), a class and a lambda. Compared exactly (`a * b + a`
//! follows the variant's contraction, see `Variant::mad`).

use conformance::prelude::*;

const SRC: &str = "cpp_features";

#[test]
fn scale_tmpl() {
    let n = 200usize;
    let mut rng = Rng::new(1200);
    let f = rng.vec_f32(n + 8, -10.0, 10.0);
    let d: Vec<f64> = (0..n + 8).map(|_| rng.f64_in(-10.0, 10.0)).collect();
    let ints: Vec<i32> = (0..n + 8).map(|_| rng.next_u32() as i32).collect();
    let shape = Shape::linear(2, 128);
    let ef: Vec<f32> = f.iter().enumerate().map(|(i, &x)| if i < n { x * 1.5 } else { x }).collect();
    let ed: Vec<f64> = d.iter().enumerate().map(|(i, &x)| if i < n { x * -0.75 } else { x }).collect();
    let ei: Vec<i32> = ints.iter().enumerate().map(|(i, &x)| if i < n { x.wrapping_mul(-3) } else { x }).collect();
    check_all(
        SRC,
        vec![
            Case::outputs(
                "_Z10scale_tmplIfEvPT_S0_i",
                shape,
                vec![Arg::input(&f), Arg::scalar(1.5f32), Arg::scalar(n as i32)],
                vec![Check::exact(0, "data", Values::F32(ef))],
            ),
            Case::outputs(
                "_Z10scale_tmplIdEvPT_S0_i",
                shape,
                vec![Arg::input(&d), Arg::scalar(-0.75f64), Arg::scalar(n as i32)],
                vec![Check::exact(0, "data", Values::F64(ed))],
            ),
            Case::outputs(
                "_Z10scale_tmplIiEvPT_S0_i",
                shape,
                vec![Arg::input(&ints), Arg::scalar(-3i32), Arg::scalar(n as i32)],
                vec![Check::exact(0, "data", Values::I32(ei))],
            ),
        ],
    );
}

#[test]
fn unrolled_sum() {
    let t = 64usize;
    let input = Rng::new(1201).vec_f32(8 * t, -10.0, 10.0);
    let cases = [(4usize, "_Z12unrolled_sumILi4EEvPKfPf"), (8, "_Z12unrolled_sumILi8EEvPKfPf")]
        .into_iter()
        .map(|(n, name)| {
            let out: Vec<f32> = (0..t).map(|i| input[i * n..i * n + n].iter().fold(0.0f32, |s, &x| s + x)).collect();
            Case::outputs(
                name,
                Shape::linear(1, t as u32),
                vec![Arg::input(&input), Arg::output::<f32>(t)],
                vec![Check::exact(1, "out", Values::F32(out))],
            )
        })
        .collect();
    check_all(SRC, cases);
}

#[test]
fn ns_kernel() {
    let t = 96usize;
    let out: Vec<i32> = (0..t as i32).map(|i| 2 * i).collect();
    check(
        SRC,
        Case::outputs(
            "_ZN16lockstep_fixture9ns_kernelEPi",
            Shape::linear(1, t as u32),
            vec![Arg::output::<i32>(t)],
            vec![Check::exact(0, "p", Values::I32(out))],
        ),
    );
}

#[test]
fn overloaded() {
    let t = 96usize;
    let mut rng = Rng::new(1202);
    let f = rng.vec_f32(t, -10.0, 10.0);
    let ints: Vec<i32> = (0..t).map(|_| rng.range_i32(-1000, 1000)).collect();
    let ef: Vec<f32> = f.iter().map(|x| x + 1.0).collect();
    let ei: Vec<i32> = ints.iter().map(|x| x + 17).collect();
    check_all(
        SRC,
        vec![
            Case::outputs(
                "_Z10overloadedPf",
                Shape::linear(1, t as u32),
                vec![Arg::input(&f)],
                vec![Check::exact(0, "p", Values::F32(ef))],
            ),
            Case::outputs(
                "_Z10overloadedPii",
                Shape::linear(1, t as u32),
                vec![Arg::input(&ints), Arg::scalar(17i32)],
                vec![Check::exact(0, "p", Values::I32(ei))],
            ),
        ],
    );
}

#[test]
fn bounded_kernel() {
    let n = 500usize;
    let mut rng = Rng::new(1203);
    let a = rng.vec_f32(n, -10.0, 10.0);
    let b = rng.vec_f32(n, -10.0, 10.0);
    let args = vec![Arg::input(&a), Arg::input(&b), Arg::output::<f32>(n + 12), Arg::scalar(n as i32)];
    // __launch_bounds__(256, 2): blocks of 256
    let case = Case::new("bounded_kernel", Shape::linear(2, 256), args, move |ctx| {
        let mut c: Vec<f32> = (0..n).map(|i| ctx.variant.mad(a[i], b[i], a[i])).collect();
        c.resize(n + 12, 0.0);
        Expect::Outputs(vec![Check::exact(2, "c", Values::F32(c))])
    });
    check(SRC, case);
}

#[test]
fn bounded_kernel_maxonly() {
    let t = 128usize;
    let p = Rng::new(1204).vec_f32(t, -10.0, 10.0);
    let e: Vec<f32> = p.iter().map(|x| x * 2.0).collect();
    check(
        SRC,
        Case::outputs(
            "bounded_kernel_maxonly",
            Shape::linear(1, t as u32),
            vec![Arg::input(&p)],
            vec![Check::exact(0, "p", Values::F32(e))],
        ),
    );
}

/// `struct Params { float scale; int offset; double bias; const float *src; float *dst; int n; short tag[3]; }`
/// passed by value (48 bytes, 8-aligned); `src` and `dst` point at buffers that are no parameters.
#[test]
fn struct_by_value() {
    let n = 150usize;
    let (scale, offset, bias, tag) = (1.25f32, 7i32, -0.5f64, [3i16, -4, 100]);
    let src = Rng::new(1205).vec_f32(n, -10.0, 10.0);
    let params = Arg::deferred(move |addr| {
        // the extra buffers follow the single parameter: [param, src, dst]
        let (src, dst) = (addr[1].unwrap_or(0), addr[2].unwrap_or(0));
        let mut b = Vec::with_capacity(48);
        b.extend_from_slice(&scale.to_le_bytes());
        b.extend_from_slice(&offset.to_le_bytes());
        b.extend_from_slice(&bias.to_le_bytes());
        b.extend_from_slice(&src.to_le_bytes());
        b.extend_from_slice(&dst.to_le_bytes());
        b.extend_from_slice(&(n as i32).to_le_bytes());
        for t in tag {
            b.extend_from_slice(&t.to_le_bytes());
        }
        b.resize(48, 0);
        b
    });
    let src_in = src.clone();
    let case = Case::new("struct_by_value", Shape::linear(2, 128), vec![params], move |ctx| {
        let dst: Vec<f32> = (0..n)
            .map(|i| {
                let x = src_in[(i + offset as usize) % n];
                ctx.variant.mad(x, scale, bias as f32) + f32::from(tag[i % 3])
            })
            .collect();
        let dst_bytes = to_bytes(&dst);
        Expect::Outputs(vec![Check::output("dst", move |o| {
            if o.extra.get(1).map(Vec::as_slice) == Some(dst_bytes.as_slice()) {
                Ok(())
            } else {
                let got: Vec<f32> = from_bytes(o.extra.get(1).map(Vec::as_slice).unwrap_or(&[]));
                let bad: Vec<String> = got
                    .iter()
                    .zip(&dst)
                    .enumerate()
                    .filter(|(_, (a, e))| a.to_bits() != e.to_bits())
                    .take(8)
                    .map(|(i, (a, e))| format!("[{i}] {a} vs {e}"))
                    .collect();
                Err(format!("dst differs (actual vs expected): {}", bad.join(", ")))
            }
        })])
    })
    .extra_buffer(to_bytes(&src))
    .extra_buffer(vec![0u8; 4 * n]);
    check(SRC, case);
}

#[test]
fn struct_aligned16() {
    let t = 64usize;
    let v = [1.5f32, -2.0, 3.25, 4.0];
    let out: Vec<f32> = (0..t).flat_map(|i| [v[0] + i as f32, v[1], v[2], v[3]]).collect();
    // `Vec4 v` is a by-value 16-byte struct parameter: its bytes, not a pointer.
    let args = vec![Arg::Scalar(to_bytes(&v)), Arg::output::<f32>(4 * t)];
    check(
        SRC,
        Case::outputs(
            "struct_aligned16",
            Shape::linear(1, t as u32),
            args,
            vec![Check::exact(1, "out", Values::F32(out))],
        ),
    );
}

#[test]
fn class_and_lambda() {
    let (n, launched) = (200usize, 256usize);
    let input = Rng::new(1206).vec_f32(n, -10.0, 10.0);
    let mut out = Vec::new();
    for i in 0..n as i64 {
        let mut sum = 0.0f32;
        for k in -2..=2 {
            let j = (i + k).clamp(0, n as i64 - 1) as usize;
            sum += input[j];
        }
        out.push(sum / 5.0);
    }
    out.resize(launched, 0.0);
    let args = vec![Arg::input(&input), Arg::output::<f32>(launched), Arg::scalar(n as i32)];
    check(
        SRC,
        Case::outputs("class_and_lambda", Shape::linear(2, 128), args, vec![Check::exact(1, "out", Values::F32(out))]),
    );
}
