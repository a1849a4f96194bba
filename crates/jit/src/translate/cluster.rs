//! Cluster addressing for clusters of one CTA (`program::cluster`): `mapa` to rank 0 is its address operand,
//! to any other rank an error naming the rank.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::InstBuilder;
use program::Op;

use super::Translator;
use crate::abi::error;

impl Translator<'_, '_> {
    pub(super) fn mapa(&mut self, op: &Op) {
        let a = self.read(&op.a);
        let b = self.read(&op.b);
        let rank = self.b.ins().band_imm_u(b, 0xFFFF_FFFF);
        let other = self.b.ins().icmp_imm_u(IntCC::NotEqual, rank, 0);
        self.fail_if(other, error::CLUSTER_RANK, Some(rank), 0);
        self.write(op.dst, a);
    }
}
