// cell_alloc_cosim: the Verilated top of cell_alloc, plus the harness's exp_* inputs (the model's
// outputs in the same cycle) and `mismatch`, which drive nothing and exist only for the waveform
// (docs/cosim.md).
module cell_alloc_cosim #(
    parameter int CELLS = 256,
    localparam int IDW = $clog2(CELLS)
) (
    input  logic           clk,
    input  logic           rst_n,
    input  logic           alloc_req,
    output logic           alloc_ok,
    output logic [IDW-1:0] alloc_id,
    input  logic           free_req,
    input  logic [IDW-1:0] free_id,
    output logic           free_err,
    output logic [  IDW:0] free_count,
    output logic [  IDW:0] occupancy,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic           exp_alloc_ok,
    input  logic [IDW-1:0] exp_alloc_id,
    input  logic           exp_free_err,
    input  logic [  IDW:0] exp_free_count,
    input  logic [  IDW:0] exp_occupancy,
    input  logic           mismatch
    /* verilator lint_on UNUSEDSIGNAL */
);
  cell_alloc #(.CELLS(CELLS)) dut (.*);
endmodule
