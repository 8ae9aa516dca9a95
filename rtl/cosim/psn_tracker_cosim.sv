// psn_tracker_cosim: the Verilated top of psn_tracker, plus the harness's exp_* inputs (the
// model's outputs and state in the same cycle) and `mismatch`, which drive nothing and exist only
// for the waveform (docs/cosim.md).
module psn_tracker_cosim (

    input  logic         clk,
    input  logic         rst_n,
    input  logic [  1:0] mode,
    input  logic [  8:0] range,
    input  logic [ 20:0] ack_every,
    input  logic [ 23:0] first_psn,
    input  logic         in_valid,
    input  logic         in_read,
    input  logic [ 23:0] in_psn,
    input  logic         in_flag,
    input  logic [ 23:0] in_psns,
    output logic [  1:0] reply,
    output logic [ 23:0] out_psn,
    output logic         placed,
    output logic         read_taken,
    output logic         duplicate,
    output logic         beyond,
    output logic         out_of_order,
    output logic         trimmed,
    output logic [  9:0] delivered,
    output logic [ 23:0] cum,
    output logic [ 63:0] bitmap,
    output logic [  4:0] block,
    output logic [ 23:0] epsn,
    output logic [255:0] ahead,
    output logic [ 31:0] unacked,
    output logic         nak_sent,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [  1:0] exp_reply,
    input  logic [ 23:0] exp_out_psn,
    input  logic         exp_placed,
    input  logic         exp_read_taken,
    input  logic         exp_duplicate,
    input  logic         exp_beyond,
    input  logic         exp_out_of_order,
    input  logic         exp_trimmed,
    input  logic [  9:0] exp_delivered,
    input  logic [ 23:0] exp_cum,
    input  logic [ 63:0] exp_bitmap,
    input  logic [  4:0] exp_block,
    input  logic [ 23:0] exp_epsn,
    input  logic [255:0] exp_ahead,
    input  logic [ 31:0] exp_unacked,
    input  logic         exp_nak_sent,
    input  logic         mismatch
    /* verilator lint_on UNUSEDSIGNAL */
);
  psn_tracker dut (.*);
endmodule
