// islip_cosim: the Verilated top of islip_sched. It adds only the co-simulation harness's view:
// exp_* inputs carry the reference model's value of each output in the same cycle and `mismatch`
// marks cycles where they differ. Neither drives any logic; they exist so that the FST waveform
// shows RTL and model side by side (docs/cosim.md). RTL-in-the-loop ties them to 0.
module islip_cosim #(
    parameter int MAX_N = 64,
    parameter int KW = 7,
    localparam int PW = $clog2(MAX_N)
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [   PW:0]   n_ports,
    input  logic [ KW-1:0]   iterations,
    input  logic             start,
    input  logic [MAX_N-1:0] req_col        [MAX_N],
    input  logic [MAX_N-1:0] out_ready,
    output logic             busy,
    output logic             done,
    output logic [MAX_N-1:0] match_valid,
    output logic [ PW-1:0]   match_out      [MAX_N],
    output logic [ PW-1:0]   grant_ptr      [MAX_N],
    output logic [ PW-1:0]   accept_ptr     [MAX_N],
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic             exp_busy,
    input  logic             exp_done,
    input  logic [MAX_N-1:0] exp_match_valid,
    input  logic [ PW-1:0]   exp_match_out  [MAX_N],
    input  logic [ PW-1:0]   exp_grant_ptr  [MAX_N],
    input  logic [ PW-1:0]   exp_accept_ptr [MAX_N],
    input  logic             mismatch
    /* verilator lint_on UNUSEDSIGNAL */
);
  islip_sched #(
      .MAX_N(MAX_N),
      .KW(KW)
  ) dut (
      .*
  );
endmodule
