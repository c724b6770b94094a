/* dbosim tests — hardware profiles built in code for the op-cost tests (the YAML loader is tested elsewhere). */
#pragma once
#include "hw/HwProfile.hpp"

namespace dbosim::test {

/** @brief H200-like datasheet numbers: bf16 989 TF/s, fp8 1979 TF/s, HBM 4.8 TB/s, NVLink 450 GB/s per direction,
 *  400 Gb/s NIC. Efficiencies 1.0 so that hand arithmetic in the tests stays readable; no tables, no SM curves. */
inline models::HwProfile h200_like()
{
  models::HwProfile hw;
  hw.name                                  = "h200-like";
  hw.gpu                                   = "test profile";
  hw.provenance.kind                       = "datasheet";
  hw.sm_count                              = 132;
  hw.peak_flops_per_s[models::DType::bf16] = 989e12;
  hw.peak_flops_per_s[models::DType::fp8]  = 1979e12;
  hw.hbm_bytes_per_s                       = 4.8e12;
  hw.hbm_capacity_bytes                    = 141e9;
  hw.nvlink_bytes_per_s                    = 450e9;
  hw.nvlink_latency_us                     = 1.0;
  hw.nvlink_domain_size                    = 8;
  hw.nic_bytes_per_s                       = 50e9;
  hw.nic_latency_us                        = 2.0;
  hw.gemm_efficiency                       = 1.0;
  hw.attention_efficiency                  = 1.0;
  hw.memory_efficiency                     = 1.0;
  return hw;
}

} // namespace dbosim::test
