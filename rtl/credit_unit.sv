// credit_unit: sender-side InfiniBand link-level flow control for one port (IBTA Vol 1 sec. 7.9.4),
// VLS virtual lanes, credits in 64-byte blocks with 12-bit modular counters per VL: FCTBS (total
// blocks sent) and FCCL (credit limit last received); available = (FCCL - FCTBS) mod 4096. Ports:
// clk, rst_n (synchronous, active low: FCTBS = 0, FCCL = init_credits, sampled in reset);
// send_valid / send_vl / send_blocks -> send_accept (send_blocks <= available: FCTBS advances) or
// send_stall (the sender must retry; nothing changes); upd_valid / upd_vl / upd_fccl (the
// 12-bit field) -> upd_error when (upd_fccl - FCTBS) mod 4096 > 2048 (FCCL unchanged; otherwise FCCL =
// upd_fccl); per-VL fctbs, fccl and available. A send and an update in the same cycle both apply,
// the send first (the update is checked against the FCTBS after the send). Timing: send_accept,
// send_stall and upd_error are combinational from the state before the clock edge, the counters
// change on the edge (zero latency, one send and one update per cycle). VL numbers >= VLS are not
// allowed. Parameter: VLS (1..16).
module credit_unit #(
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
    output logic [  11:0] fctbs     [VLS],
    output logic [  11:0] fccl      [VLS],
    output logic [  11:0] available [VLS]
);
  logic [11:0] fctbs_after;  // FCTBS of upd_vl after this cycle's send
  logic [11:0] ahead;

  always_comb begin
    for (int v = 0; v < VLS; v++) available[v] = fccl[v] - fctbs[v];
    send_accept = send_valid && send_blocks <= {4'd0, available[send_vl]};
    send_stall = send_valid && !send_accept;
    fctbs_after = fctbs[upd_vl] + ((send_accept && send_vl == upd_vl) ? send_blocks[11:0] : 12'd0);
    ahead = upd_fccl - fctbs_after;
    upd_error = upd_valid && ahead > 12'd2048;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      for (int v = 0; v < VLS; v++) begin
        fctbs[v] <= '0;
        fccl[v] <= init_credits;
      end
    end else begin
      if (send_accept) fctbs[send_vl] <= fctbs[send_vl] + send_blocks[11:0];
`ifdef FABRICSIM_MUTANT
      // Checker self-test: the credit return is off by one block.
      if (upd_valid && !upd_error) fccl[upd_vl] <= upd_fccl + 12'd1;
`else
      if (upd_valid && !upd_error) fccl[upd_vl] <= upd_fccl;
`endif
    end
  end
endmodule
