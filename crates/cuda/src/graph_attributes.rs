//! Launch attributes of kernel nodes (`cudaGraphKernelNodeGetAttribute`, `SetAttribute`,
//! `CopyAttributes`): kept with the node and read back. `cudaLaunchAttributeCooperative` makes the node's
//! launch cooperative; a cluster of more than one CTA and a non-empty access policy window are refused as
//! launches and streams refuse them; the others (priority, memory synchronization domains, programmatic
//! serialization, ...) change nothing in how lockstep runs the node.

use std::collections::HashMap;

use crate::graph::{Node, NodeOp};
use crate::stream::{check_access_policy_window, ATTR_ACCESS_POLICY_WINDOW as ACCESS_POLICY_WINDOW};
use crate::{Cuda, Error, Result, StreamAttrValue};

/// `cudaLaunchAttributeID`s a kernel node takes.
const COOPERATIVE: i32 = 2;
const CLUSTER_DIMENSION: i32 = 4;
const NODE_ATTRIBUTES: [i32; 11] = [ACCESS_POLICY_WINDOW, COOPERATIVE, CLUSTER_DIMENSION, 5, 6, 8, 9, 10, 11, 13, 14];

fn word(v: &StreamAttrValue, i: usize) -> u32 {
    u32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap_or_default())
}

/// A kernel node's cooperative flag follows its attribute (also after its parameters change).
pub(crate) fn apply_attributes(node: &mut Node) {
    let cooperative = node.attributes.get(&COOPERATIVE).is_some_and(|v| word(v, 0) != 0);
    if let NodeOp::Kernel(k) = &mut node.op {
        k.cooperative = cooperative;
    }
}

impl Cuda {
    /// `cudaGraphKernelNodeSetAttribute`.
    pub fn graph_kernel_node_set_attribute(&self, node: u64, attr: i32, value: StreamAttrValue) -> Result<()> {
        if !NODE_ATTRIBUTES.contains(&attr) {
            return Err(Error::INVALID_VALUE);
        }
        check_access_policy_window(attr, &value)?;
        if attr == CLUSTER_DIMENSION {
            self.check_cluster([word(&value, 0), word(&value, 1), word(&value, 2)])?;
        }
        let mut s = self.graphs.lock();
        let n = s.node_mut(node)?;
        if !matches!(n.op, NodeOp::Kernel(_)) {
            return Err(Error::INVALID_VALUE);
        }
        n.attributes.insert(attr, value);
        apply_attributes(n);
        Ok(())
    }

    /// `cudaGraphKernelNodeGetAttribute`: the value set, or zeros.
    pub fn graph_kernel_node_attribute(&self, node: u64, attr: i32) -> Result<StreamAttrValue> {
        if !NODE_ATTRIBUTES.contains(&attr) {
            return Err(Error::INVALID_VALUE);
        }
        let s = self.graphs.lock();
        let n = s.nodes.get(&node).filter(|n| matches!(n.op, NodeOp::Kernel(_))).ok_or(Error::INVALID_VALUE)?;
        Ok(n.attributes.get(&attr).copied().unwrap_or([0; crate::stream::STREAM_ATTR_BYTES]))
    }

    /// `cudaGraphKernelNodeCopyAttributes`: `dst` gets `src`'s attributes.
    pub fn graph_kernel_node_copy_attributes(&self, dst: u64, src: u64) -> Result<()> {
        let mut s = self.graphs.lock();
        let kernel = |n: Option<&Node>| n.filter(|n| matches!(n.op, NodeOp::Kernel(_))).is_some();
        if !kernel(s.nodes.get(&src)) || !kernel(s.nodes.get(&dst)) {
            return Err(Error::INVALID_VALUE);
        }
        let attributes: HashMap<i32, StreamAttrValue> = s.nodes[&src].attributes.clone();
        let n = s.node_mut(dst)?;
        n.attributes = attributes;
        apply_attributes(n);
        Ok(())
    }
}
