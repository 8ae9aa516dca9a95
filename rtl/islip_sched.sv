// islip_sched: an N x N iSLIP crossbar scheduler (McKeown, IEEE/ACM ToN 1999), one
// request/grant/accept iteration per clock. Every output j has a programmable-priority round-robin
// grant arbiter with pointer grant_ptr[j], every input i an accept arbiter with pointer
// accept_ptr[i]; an output grants the first requesting free input at or after its pointer, an input
// accepts the first granting output at or after its pointer, and the pointers move (to one past
// the accepted partner, modulo the run-time port count) only for accepts made in the FIRST
// iteration of a matching. Ports: clk; rst_n (synchronous, active low; n_ports (1..MAX_N) and
// iterations (>= 1, 0 counts as 1) are sampled while it is low and held until the next reset);
// start (sampled when !busy) with req_col[j] (bit i: input i has a cell for output j, bits at or
// above n_ports ignored) and out_ready (outputs that may be matched); busy, done, match_valid[i] /
// match_out[i] (input i's output) and both pointer arrays, all registered. Timing: iteration 1 runs
// on the start edge from the input ports, iterations 2..k on the next k-1 edges from registers; done
// is high for one cycle after the k-th edge, when match_* show the new matching (held until the
// next one): latency k cycles, one matching every k cycles (start may be raised in the done cycle).
// Parameters: MAX_N (ports of this instance), KW (width of the iteration count).
module islip_sched #(
    parameter int MAX_N = 64,
    parameter int KW = 7,
    localparam int PW = $clog2(MAX_N)
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [   PW:0]   n_ports,
    input  logic [ KW-1:0]   iterations,
    input  logic             start,
    input  logic [MAX_N-1:0] req_col    [MAX_N],
    input  logic [MAX_N-1:0] out_ready,
    output logic             busy,
    output logic             done,
    output logic [MAX_N-1:0] match_valid,
    output logic [ PW-1:0]   match_out  [MAX_N],
    output logic [ PW-1:0]   grant_ptr  [MAX_N],
    output logic [ PW-1:0]   accept_ptr [MAX_N]
);
  // Run-time configuration, latched in reset.
  logic [PW:0] n_q;
  logic [KW-1:0] k_q;
  logic [MAX_N-1:0] port_mask;  // ports 0..n_q-1
  // Matching in progress.
  logic [KW-1:0] iter_q;  // iterations done so far
  logic [MAX_N-1:0] req_q[MAX_N];
  logic [MAX_N-1:0] free_in_q, free_out_q, wvalid_q;
  logic [PW-1:0] wout_q[MAX_N];

  // --- one iteration (combinational), from the ports on the start edge, else from registers ---
  logic first;
  logic [MAX_N-1:0] src_req[MAX_N];
  logic [MAX_N-1:0] fin, fout, gnt_any, acc_any, acc_out;
  logic [PW-1:0] gnt_idx[MAX_N], acc_idx[MAX_N];
  logic [MAX_N-1:0] gnt_to[MAX_N];  // gnt_to[i] bit j: output j grants input i

  // Index of the first set bit of v at or after p, wrapping (v != 0); the set bits of v are all
  // below n_q, so wrapping at MAX_N is wrapping at n_q.
  function automatic logic [PW-1:0] rr_pick(input logic [MAX_N-1:0] v, input logic [PW-1:0] p);
    logic [MAX_N-1:0] hi, sel;
    hi  = v & ({MAX_N{1'b1}} << p);
    sel = (hi != '0) ? hi : v;
    // The one-hot lowest set bit minus one has exactly `index` ones below it.
    return PW'($countones((sel & (~sel + 1'b1)) - 1'b1));
  endfunction

  function automatic logic [PW-1:0] next_ptr(input logic [PW-1:0] x, input logic [PW:0] n);
    return ({1'b0, x} + 1'b1 == n) ? '0 : x + 1'b1;
  endfunction

  always_comb begin
    first = start && !busy;
    for (int j = 0; j < MAX_N; j++) src_req[j] = first ? req_col[j] : req_q[j];
    fin  = first ? port_mask : free_in_q;
    fout = first ? (out_ready & port_mask) : free_out_q;
    // Grant: each free output picks a free requesting input.
    for (int j = 0; j < MAX_N; j++) begin
      gnt_any[j] = fout[j] && ((src_req[j] & fin) != '0);
      gnt_idx[j] = rr_pick(src_req[j] & fin, grant_ptr[j]);
    end
    for (int i = 0; i < MAX_N; i++) gnt_to[i] = '0;
    for (int j = 0; j < MAX_N; j++) if (gnt_any[j]) gnt_to[gnt_idx[j]][j] = 1'b1;
    // Accept: each input holding grants picks one output.
    for (int i = 0; i < MAX_N; i++) begin
      acc_any[i] = gnt_to[i] != '0;
      acc_idx[i] = rr_pick(gnt_to[i], accept_ptr[i]);
    end
    // Output j's grant was accepted when the input it granted accepted j.
    for (int j = 0; j < MAX_N; j++)
      acc_out[j] = gnt_any[j] && acc_any[gnt_idx[j]] && acc_idx[gnt_idx[j]] == PW'(j);
  end

  // Port count as configured (0 counts as 1) and its port mask, latched in reset.
  logic [PW:0] n_eff;
  assign n_eff = (n_ports == '0) ? (PW + 1)'(1) : n_ports;

  logic last;  // this edge runs the final iteration of the matching
  assign last = (first || busy) && (first ? (k_q <= 1) : (iter_q + 1'b1 >= k_q));

`ifdef FABRICSIM_MUTANT
  // Checker self-test: the pointers also move on accepts of later iterations (not iSLIP).
  wire move_ptrs = first || busy;
`else
  wire move_ptrs = first;
`endif

  wire step = first || busy;  // this edge runs an iteration

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      n_q <= n_eff;
      k_q <= (iterations == '0) ? KW'(1) : iterations;
      port_mask <= MAX_N'(({{MAX_N{1'b0}}, 1'b1} << n_eff) - 1'b1);
      busy <= 1'b0;
      done <= 1'b0;
      iter_q <= '0;
      free_in_q <= '0;
      free_out_q <= '0;
      wvalid_q <= '0;
      match_valid <= '0;
    end else begin
      done <= last;
      if (step) begin
        busy <= !last;
        iter_q <= first ? KW'(1) : iter_q + 1'b1;
        free_in_q <= fin & ~acc_any;
        free_out_q <= fout & ~acc_out;
        wvalid_q <= (first ? '0 : wvalid_q) | acc_any;
        if (last) match_valid <= (first ? '0 : wvalid_q) | acc_any;
      end
    end
  end

  // Per-port registers (input i's accept arbiter and match, output i's grant arbiter and latched
  // requests).
  for (genvar i = 0; i < MAX_N; i++) begin : g_port
    always_ff @(posedge clk) begin
      if (!rst_n) begin
        req_q[i] <= '0;
        wout_q[i] <= '0;
        match_out[i] <= '0;
        grant_ptr[i] <= '0;
        accept_ptr[i] <= '0;
      end else if (step) begin
        if (first) req_q[i] <= req_col[i];
        if (acc_any[i]) wout_q[i] <= acc_idx[i];
        if (last) match_out[i] <= acc_any[i] ? acc_idx[i] : wout_q[i];
        if (move_ptrs && acc_any[i]) accept_ptr[i] <= next_ptr(acc_idx[i], n_q);
        if (move_ptrs && acc_out[i]) grant_ptr[i] <= next_ptr(gnt_idx[i], n_q);
      end
    end
  end
endmodule
