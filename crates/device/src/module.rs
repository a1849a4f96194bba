//! A module loaded onto the device: module-scope `.global`/`.const` variables allocated and initialized in
//! device memory, and the shared-memory layout of each kernel.

use std::collections::HashMap;

use ir::{
    ConstExpr, FuncId, GlobalId, Immediate, Init, Module, NamedValue, Opcode, Operand, ScalarType, StateSpace, Symbol,
    VarId,
};

use crate::memory::{DeviceMemory, DevicePtr};

/// Function "addresses" (for indirect calls through tables) live in a window no real pointer uses.
pub const FUNCTION_WINDOW: u64 = 0xFC00_0000_0000_0000;

/// A module whose global variables have device addresses.
#[derive(Debug)]
pub struct LoadedModule {
    pub module: Module,
    /// Device address of every module-scope `.global`/`.const` variable (`None` for other spaces).
    pub global_addresses: Vec<Option<DevicePtr>>,
}

impl LoadedModule {
    /// Allocates and initializes the module's `.global` and `.const` variables.
    pub fn load(module: Module, memory: &mut DeviceMemory) -> Result<LoadedModule, String> {
        let mut addresses = vec![None; module.globals.len()];
        for (id, var) in module.globals.iter() {
            if !matches!(var.space, StateSpace::Global | StateSpace::Const) {
                continue;
            }
            let size = variable_size(var);
            let label = format!("{} variable `{}`", var.space, var.name);
            addresses[id.as_u32() as usize] = Some(memory.alloc(size, label));
        }
        let loaded = LoadedModule { module, global_addresses: addresses };
        for (id, var) in loaded.module.globals.iter() {
            let (Some(addr), Some(init)) = (loaded.global_address(id), &var.init) else { continue };
            let bytes = loaded.initializer_bytes(var, init)?;
            let size = variable_size(var) as usize;
            memory
                .write_initial(addr, &bytes[..bytes.len().min(size)])
                .map_err(|e| format!("initializing `{}`: {e}", var.name))?;
        }
        for (id, var) in loaded.module.globals.iter() {
            if var.space == StateSpace::Const {
                if let Some(addr) = loaded.global_address(id) {
                    memory.set_read_only(addr, true);
                }
            }
        }
        Ok(loaded)
    }

    pub fn global_address(&self, id: GlobalId) -> Option<DevicePtr> {
        self.global_addresses.get(id.as_u32() as usize).copied().flatten()
    }

    /// The device address of a module-scope variable by name.
    pub fn symbol(&self, name: &str) -> Option<(GlobalId, DevicePtr, u64)> {
        let (id, var) = self.module.globals.iter().find(|(_, v)| v.name == name)?;
        Some((id, self.global_address(id)?, variable_size(var)))
    }

    pub fn function_address(f: FuncId) -> u64 {
        FUNCTION_WINDOW + u64::from(f.as_u32()) * 16
    }

    pub fn function_at(&self, address: u64) -> Option<FuncId> {
        let off = address.checked_sub(FUNCTION_WINDOW)?;
        (off % 16 == 0 && off / 16 < self.module.functions.len() as u64).then(|| FuncId::from_u32((off / 16) as u32))
    }

    fn initializer_bytes(&self, var: &ir::Variable, init: &Init) -> Result<Vec<u8>, String> {
        let mut leaves = Vec::new();
        flatten(init, &mut leaves);
        let elem = var.ty.size() as usize;
        let mut out = Vec::with_capacity(leaves.len() * elem);
        for leaf in leaves {
            let value = match leaf {
                Some(e) => self.eval(e, var.ty).map_err(|m| format!("initializer of `{}`: {m}", var.name))?,
                None => 0,
            };
            out.extend_from_slice(&value.to_le_bytes()[..elem.min(8)]);
            out.resize(out.len() + elem.saturating_sub(8), 0);
        }
        Ok(out)
    }

    /// The bits of one scalar initializer element of type `ty`.
    fn eval(&self, e: &ConstExpr, ty: ScalarType) -> Result<u64, String> {
        if ty.is_float() {
            if let ConstExpr::Imm(imm) = e {
                return Ok(float_bits(*imm, ty));
            }
        }
        self.eval_int(e).map(|v| v as u64)
    }

    fn eval_int(&self, e: &ConstExpr) -> Result<i64, String> {
        use ptx::ast::{BinaryOp as B, UnaryOp as U};
        Ok(match e {
            ConstExpr::Imm(Immediate::Int { value, .. }) => *value,
            ConstExpr::Imm(Immediate::F32Bits(b)) => f32::from_bits(*b) as i64,
            ConstExpr::Imm(Immediate::F64Bits(b)) => f64::from_bits(*b) as i64,
            ConstExpr::Imm(Immediate::Float(x)) => *x as i64,
            ConstExpr::Global(g) | ConstExpr::Generic(g) => match self.global_address(*g) {
                Some(a) => a as i64,
                None => return Err(format!("`{}` has no device address", self.module.globals[*g].name)),
            },
            ConstExpr::Func(f) => LoadedModule::function_address(*f) as i64,
            ConstExpr::Unary(op, a) => {
                let a = self.eval_int(a)?;
                match op {
                    U::Neg => a.wrapping_neg(),
                    U::Not => !a,
                    U::LogicalNot => i64::from(a == 0),
                }
            }
            ConstExpr::Binary(op, a, b) => {
                let (a, b) = (self.eval_int(a)?, self.eval_int(b)?);
                match op {
                    B::Add => a.wrapping_add(b),
                    B::Sub => a.wrapping_sub(b),
                    B::Mul => a.wrapping_mul(b),
                    B::Div => a.checked_div(b).ok_or("division by zero")?,
                    B::Rem => a.checked_rem(b).ok_or("division by zero")?,
                    B::Shl => a.wrapping_shl(b as u32),
                    B::Shr => a.wrapping_shr(b as u32),
                    B::And => a & b,
                    B::Or => a | b,
                    B::Xor => a ^ b,
                }
            }
        })
    }
}

fn float_bits(imm: Immediate, ty: ScalarType) -> u64 {
    let x = match imm {
        Immediate::Int { value, unsigned: true } => value as u64 as f64,
        Immediate::Int { value, .. } => value as f64,
        Immediate::F32Bits(b) if ty == ScalarType::F32 => return u64::from(b),
        Immediate::F32Bits(b) => f64::from(f32::from_bits(b)),
        Immediate::F64Bits(b) if ty == ScalarType::F64 => return b,
        Immediate::F64Bits(b) => f64::from_bits(b),
        Immediate::Float(x) => x,
    };
    match ty {
        ScalarType::F64 => x.to_bits(),
        ScalarType::F32 => u64::from((x as f32).to_bits()),
        // f16/bf16 initializers are written as bit patterns by compilers.
        _ => x as u64,
    }
}

fn flatten<'a>(init: &'a Init, out: &mut Vec<Option<&'a ConstExpr>>) {
    match init {
        Init::Expr(e) => out.push(Some(e)),
        Init::List(items) => items.iter().for_each(|i| flatten(i, out)),
        Init::Named { value: NamedValue::Expr(e), .. } => out.push(Some(e)),
        Init::Named { .. } => out.push(None),
    }
}

fn leaf_count(init: &Init) -> u64 {
    match init {
        Init::List(items) => items.iter().map(leaf_count).sum(),
        _ => 1,
    }
}

/// Size of a variable; an unsized array takes its size from its initializer.
pub fn variable_size(var: &ir::Variable) -> u64 {
    if var.dims.iter().any(Option::is_none) {
        if let Some(init) = &var.init {
            return leaf_count(init) * var.element_size();
        }
    }
    var.size()
}

/// Where a shared variable lives in a CTA's shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SharedVar {
    Global(GlobalId),
    Local(FuncId, VarId),
}

/// The shared memory of one kernel's CTAs: static variables at fixed offsets, then dynamic shared memory
/// (every `extern .shared` array starts there, as in CUDA).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedLayout {
    pub offsets: HashMap<SharedVar, u64>,
    pub static_size: u64,
    pub dynamic_offset: u64,
    /// The largest alignment a shared variable asks for (at least 16): the CTA's shared memory must start
    /// at a multiple of it, for the variables' generic addresses to be aligned.
    pub align: u64,
}

impl SharedLayout {
    /// Lays out the module-scope shared variables and those of the kernel and every function it may call.
    pub fn for_kernel(module: &Module, kernel: FuncId) -> SharedLayout {
        let reachable = reachable_functions(module, kernel);
        let mut layout = SharedLayout::default();
        let mut offset = 0u64;
        let mut max_extern_align = 16u64;
        let mut place = |var: &ir::Variable, key: SharedVar, layout: &mut SharedLayout| {
            if !matches!(var.space, StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster) {
                return;
            }
            if var.dims.iter().any(Option::is_none) || var.linkage == ir::Linkage::Extern {
                max_extern_align = max_extern_align.max(var.alignment());
                layout.offsets.insert(key, u64::MAX);
                return;
            }
            let align = var.alignment();
            layout.align = layout.align.max(align);
            offset = offset.div_ceil(align) * align;
            layout.offsets.insert(key, offset);
            offset += variable_size(var);
        };
        for (id, var) in module.globals.iter() {
            place(var, SharedVar::Global(id), &mut layout);
        }
        for &f in &reachable {
            if let Some(body) = &module.functions[f].body {
                for (v, var) in body.vars.iter() {
                    place(var, SharedVar::Local(f, v), &mut layout);
                }
            }
        }
        layout.static_size = offset;
        layout.align = layout.align.max(max_extern_align);
        layout.dynamic_offset = offset.div_ceil(max_extern_align) * max_extern_align;
        for o in layout.offsets.values_mut() {
            if *o == u64::MAX {
                *o = layout.dynamic_offset;
            }
        }
        layout
    }
}

/// The kernel and every function reachable from it by direct calls; every function with a body if it makes
/// an indirect call or takes a function's address.
pub fn reachable_functions(module: &Module, kernel: FuncId) -> Vec<FuncId> {
    let mut seen = vec![false; module.functions.len()];
    let mut stack = vec![kernel];
    let mut order = Vec::new();
    while let Some(f) = stack.pop() {
        if std::mem::replace(&mut seen[f.as_u32() as usize], true) {
            continue;
        }
        order.push(f);
        let Some(body) = &module.functions[f].body else { continue };
        for inst in body.insts.values() {
            if inst.opcode != Opcode::Call {
                continue;
            }
            let direct = inst.operands.iter().find_map(|o| match o {
                Operand::Symbol(Symbol::Func(g)) => Some(*g),
                _ => None,
            });
            match direct {
                Some(g) => stack.push(g),
                None => {
                    stack.extend(module.functions.keys());
                }
            }
        }
    }
    order
}
