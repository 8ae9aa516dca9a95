// crc32_cosim: the Verilated top of crc32_stream, plus the harness's exp_* inputs (the model's
// outputs in the same cycle) and `mismatch`, which drive nothing and exist only for the waveform
// (docs/cosim.md).
module crc32_cosim #(
    parameter int W = 8,
    localparam int NBW = $clog2(W + 1)
) (
    input  logic           clk,
    input  logic           rst_n,
    input  logic           in_valid,
    input  logic           in_sof,
    input  logic           in_eof,
    input  logic [8*W-1:0] in_data,
    input  logic [NBW-1:0] in_nbytes,
    output logic           fcs_valid,
    output logic [   31:0] fcs,
    output logic [   31:0] crc_state,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic           exp_fcs_valid,
    input  logic [   31:0] exp_fcs,
    input  logic [   31:0] exp_crc_state,
    input  logic           mismatch
    /* verilator lint_on UNUSEDSIGNAL */
);
  crc32_stream #(.W(W)) dut (.*);
endmodule
