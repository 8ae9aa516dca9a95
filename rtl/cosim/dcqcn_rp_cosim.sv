// dcqcn_rp_cosim: the Verilated top of dcqcn_rp, plus the harness's exp_* inputs (the model's
// registers in the same cycle) and `mismatch`, which drive nothing and exist only for the
// waveform (docs/cosim.md).
module dcqcn_rp_cosim (
    input  logic        clk,
    input  logic        rst_n,
    input  logic [23:0] line_rate,
    input  logic [23:0] ai_rate,
    input  logic [23:0] hai_rate,
    input  logic [23:0] min_rate,
    input  logic [63:0] alpha_period,
    input  logic [63:0] decrease_period,
    input  logic [63:0] rate_period,
    input  logic [63:0] check_offset,
    input  logic [ 7:0] f_steps,
    input  logic [ 4:0] g_shift,
    input  logic        cnp,
    input  logic        timer,
    input  logic [63:0] now,
    output logic [ 2:0] state,
    output logic        busy,
    output logic        started,
    output logic        alpha_cnp,
    output logic        check_armed,
    output logic        rate_armed,
    output logic [23:0] rc,
    output logic [23:0] rt,
    output logic [24:0] alpha,
    output logic [ 7:0] stage,
    output logic [63:0] tnow,
    output logic [63:0] alpha_next,
    output logic [63:0] check_at,
    output logic [63:0] rate_next,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [ 2:0] exp_state,
    input  logic        exp_started,
    input  logic        exp_alpha_cnp,
    input  logic        exp_check_armed,
    input  logic        exp_rate_armed,
    input  logic [23:0] exp_rc,
    input  logic [23:0] exp_rt,
    input  logic [24:0] exp_alpha,
    input  logic [ 7:0] exp_stage,
    input  logic [63:0] exp_tnow,
    input  logic [63:0] exp_alpha_next,
    input  logic [63:0] exp_check_at,
    input  logic [63:0] exp_rate_next,
    input  logic        mismatch
    /* verilator lint_on UNUSEDSIGNAL */
);
  dcqcn_rp dut (.*);
endmodule
