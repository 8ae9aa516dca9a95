// credit_unit_cosim: the Verilated top of credit_unit, plus the harness's exp_* inputs (the
// model's outputs in the same cycle) and `mismatch`, which drive nothing and exist only for the
// waveform (docs/cosim.md).
module credit_unit_cosim #(
    parameter int VLS = 8,
    localparam int VW = (VLS > 1) ? $clog2(VLS) : 1
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic [  11:0] init_credits,
    input  logic          send_valid,
    input  logic [VW-1:0] send_vl,
    input  logic [  15:0] send_blocks,
    output logic          send_accept,
    output logic          send_stall,
    input  logic          upd_valid,
    input  logic [VW-1:0] upd_vl,
    input  logic [  11:0] upd_fccl,
    output logic          upd_error,
    output logic [  11:0] fctbs         [VLS],
    output logic [  11:0] fccl          [VLS],
    output logic [  11:0] available     [VLS],
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic          exp_send_accept,
    input  logic          exp_send_stall,
    input  logic          exp_upd_error,
    input  logic [  11:0] exp_fctbs     [VLS],
    input  logic [  11:0] exp_fccl      [VLS],
    input  logic [  11:0] exp_available [VLS],
    input  logic          mismatch
    /* verilator lint_on UNUSEDSIGNAL */
);
  credit_unit #(.VLS(VLS)) dut (.*);
endmodule
