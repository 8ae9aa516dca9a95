// dcqcn_rp: DCQCN's reaction point for one QP in fixed point (the rules of the HPCC work's
// rdma-hw.cc; reference model models/nic/dcqcn_rp.h, whose header gives the arithmetic and the
// sequencing step by step). Registers: current and target rate rc / rt (24-bit Mb/s), alpha
// (25-bit Q24, 2^24 = 1.0), the fast-recovery stage (8 bits, saturating), and the three timers
// as 64-bit due times in fs (alpha period end, decrease check, rate timer) with armed flags.
// Ports: clk, rst_n (synchronous, active low: line_rate, ai_rate, hai_rate, min_rate (Mb/s),
// alpha_period, decrease_period, rate_period, check_offset (fs), f_steps and g_shift (g =
// 2^-g_shift) are sampled in reset; rc = rt = line, alpha 1.0, nothing armed); commands cnp and
// timer with their time `now` (cnp first if both), taken only when idle; every output is a
// register: state (0 idle, 1 CNP alpha catch-up, 2 CNP check catch-up, 3 timer events, 4 alpha
// catch-up before a cut), busy (state != idle) and the registers above. Timing: a command is
// sampled on the edge that ends an idle cycle; each later edge does one step (an alpha period,
// a check period, an increase, or a cut) until the state is idle again.
module dcqcn_rp (
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
    output logic [63:0] rate_next
);
  localparam logic [2:0] IDLE = 3'd0, CNP_ALPHA = 3'd1, CNP_CHECK = 3'd2, TIMER = 3'd3;
  localparam logic [2:0] DEC_ALPHA = 3'd4;

  // Constants, sampled in reset.
  logic [23:0] k_line, k_ai, k_hai, k_min;
  logic [63:0] k_pa, k_pd, k_pr, k_off;
  logic [7:0] k_f;
  logic [4:0] k_g;

  // One alpha period: a - round(a / 2^g) + (CNP in the period ? 2^(24-g) : 0).
  logic [31:0] a32, a_round;
  logic [24:0] alpha_step;
  // An increase: the target (from stage F on), the rounded-up average, the stage.
  logic [24:0] rt_sum;
  logic [23:0] rt_inc, rc_inc;
  logic [7:0] stage_inc;
  logic stop_inc;
  // A cut: Rc - round(Rc alpha / 2^25), floored at min.
  logic [48:0] prod;
  logic [23:0] cut, rc_cut, rc_dec, rt_dec;
  logic rate_due, check_due, rate_first;

  always_comb begin
    a32 = {7'd0, alpha};
`ifdef FABRICSIM_MUTANT
    // Mutant 1: alpha decays by the truncated, not the rounded, fraction.
    a_round = a32 >> k_g;
`else
    a_round = (a32 + (32'd1 << (k_g - 5'd1))) >> k_g;
`endif
    alpha_step = 25'(a32 - a_round + (alpha_cnp ? (32'h1000000 >> k_g) : 32'd0));

    rt_sum = {1'b0, rt} + {1'b0, (stage == k_f) ? k_ai : k_hai};
    if (stage >= k_f) rt_inc = (rt_sum > {1'b0, k_line}) ? k_line : rt_sum[23:0];
    else rt_inc = rt;
`ifdef FABRICSIM_MUTANT_2
    // Mutant 2: the average rounds down (recovery never quite reaches the target).
    rc_inc = 24'(({1'b0, rc} + {1'b0, rt_inc}) >> 1);
`else
    rc_inc = 24'(({1'b0, rc} + {1'b0, rt_inc} + 25'd1) >> 1);
`endif
    stage_inc = (stage == 8'hFF) ? stage : stage + 8'd1;
    stop_inc = rc_inc >= k_line && rt_inc >= k_line;

    prod = {25'd0, rc} * {24'd0, alpha};
    cut = 24'((prod + 49'h1000000) >> 25);
    rc_cut = rc - cut;
`ifdef FABRICSIM_MUTANT_4
    // Mutant 4: the floor is one Mb/s below min_rate.
    rc_dec = (rc_cut < k_min) ? k_min - 24'd1 : rc_cut;
`else
    rc_dec = (rc_cut < k_min) ? k_min : rc_cut;
`endif
    rt_dec = (stage != 8'd0) ? rc : rt;

    rate_due = rate_armed && rate_next <= tnow;
    check_due = check_armed && check_at <= tnow;
`ifdef FABRICSIM_MUTANT_3
    // Mutant 3: at a tie the decrease check goes before the rate timer.
    rate_first = rate_due && (!check_due || rate_next < check_at);
`else
    rate_first = rate_due && (!check_due || rate_next <= check_at);
`endif
    busy = state != IDLE;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      k_line <= line_rate;
      k_ai <= ai_rate;
      k_hai <= hai_rate;
      k_min <= min_rate;
      k_pa <= alpha_period;
      k_pd <= decrease_period;
      k_pr <= rate_period;
      k_off <= check_offset;
      k_f <= f_steps;
      k_g <= g_shift;
      state <= IDLE;
      started <= 1'b0;
      alpha_cnp <= 1'b0;
      check_armed <= 1'b0;
      rate_armed <= 1'b0;
      rc <= line_rate;
      rt <= line_rate;
      alpha <= 25'h1000000;
      stage <= 8'd0;
      tnow <= 64'd0;
      alpha_next <= 64'd0;
      check_at <= 64'd0;
      rate_next <= 64'd0;
    end else begin
      unique case (state)
        IDLE:
        if (cnp) begin
          tnow <= now;
          if (started) state <= CNP_ALPHA;
          else begin
            started <= 1'b1;
            alpha <= 25'h1000000;
            alpha_next <= now + k_pa;
            check_at <= now + k_off + k_pd;
            check_armed <= 1'b1;
          end
        end else if (timer) begin
          tnow <= now;
          state <= TIMER;
        end
        CNP_ALPHA:
        if (alpha_next <= tnow) begin
          alpha <= alpha_step;
          alpha_cnp <= 1'b0;
          alpha_next <= alpha_next + k_pa;
        end else begin
          alpha_cnp <= 1'b1;
          state <= check_armed ? IDLE : CNP_CHECK;
        end
        CNP_CHECK:
        if (check_at <= tnow) check_at <= check_at + k_pd;
        else begin
          check_armed <= 1'b1;
          state <= IDLE;
        end
        TIMER:
        if (rate_first) begin
          rt <= rt_inc;
          rc <= rc_inc;
          stage <= stage_inc;
          if (stop_inc) rate_armed <= 1'b0;
          else rate_next <= rate_next + k_pr;
        end else if (check_due) state <= DEC_ALPHA;
        else state <= IDLE;
        DEC_ALPHA:
        if (alpha_next <= check_at) begin
          alpha <= alpha_step;
          alpha_cnp <= 1'b0;
          alpha_next <= alpha_next + k_pa;
        end else begin
          check_armed <= 1'b0;
          rt <= rt_dec;
          rc <= rc_dec;
          stage <= 8'd0;
          rate_next <= check_at + k_pr;
          rate_armed <= 1'b1;
          state <= TIMER;
        end
        default: state <= IDLE;
      endcase
    end
  end
endmodule
