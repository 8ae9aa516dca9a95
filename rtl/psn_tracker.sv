// psn_tracker: a QP's receive tracker, the responder's per-packet state for three transports
// (mode 0 go-back-N, 1 selective repeat, 2 RUD; reference: the responders of
// models/nic/rc_transport.h, rc_selective.h and rud_transport.h, behind models/nic/psn_tracker.h).
// State: the expected PSN epsn (24 bits, wrapping), a bitmap `ahead` of the PSNs placed beyond
// it (bit i: epsn + 1 + i; RANGE = 256 bits), the packets in order since the last ACK (unacked)
// and go-back-N's "NAK sent for this gap". Ports: clk, rst_n (synchronous, active low: mode,
// range (1..256 PSNs placed beyond epsn), ack_every (1..2^20) and first_psn sampled in reset);
// one packet per cycle: in_valid, in_read (an RDMA READ request taking in_psns PSNs; go-back-N
// and selective), in_psn, in_flag (AckReq; RUD: trimmed); outputs, combinational from the state
// before the edge and the packet: reply (0 none, 1 ACK, 2 NAK / RUD NACK), out_psn (go-back-N's
// ACK or NAK PSN), the packet's fate (placed, read_taken, duplicate, beyond, out_of_order,
// trimmed), delivered (PSNs now in order), and the SACK (cum, bitmap: selective 64 bits, bit i =
// cum + 1 + i; RUD 32 bits of block `block`); the state is updated on the edge. A PSN's
// distance from epsn is taken modulo 2^24 as a signed 24-bit number (behind: negative).
module psn_tracker (
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
    output logic         nak_sent
);
  localparam logic [1:0] GBN = 2'd0, SR = 2'd1, RUD = 2'd2;
  localparam logic [1:0] NONE = 2'd0, ACK = 2'd1, NAK = 2'd2;

  logic [1:0] k_mode;
  logic [8:0] k_range;
  logic [20:0] k_ack_every;

  // The packet against the state.
  logic [23:0] d;
  logic behind, in_order, ahead_of, in_range, was_placed;
  logic [7:0] idx;
  // In order: over it and the run of placed PSNs after it (a READ: over its PSNs first).
  logic [255:0] src, run_end, placed_one;
  logic [8:0] run;          // placed PSNs right after (0..256)
  logic [9:0] step;         // bitmap shift: run + 1
  logic [255:0] adv_ahead;  // the bitmap after moving
  logic [23:0] adv_epsn;
  // The state after this packet, and the SACK computed from it.
  logic [23:0] n_epsn;
  logic [255:0] n_ahead;
  logic [31:0] n_unacked, sum_unacked;
  logic n_nak_sent;
  logic [23:0] d2;
  logic [4:0] blk;
  logic [256:0] ext;
  logic [31:0] ext_sh;
  logic sack;

  always_comb begin
    d = in_psn - epsn;
`ifdef FABRICSIM_MUTANT
    // Mutant 1: "behind" by an unsigned compare, which is wrong across the 24-bit wrap.
    behind = in_psn < epsn;
`else
    behind = d[23];
`endif
    in_order = d == 24'd0;
    ahead_of = !behind && !in_order;
`ifdef FABRICSIM_MUTANT_2
    // Mutant 2: the last PSN of the range counts as beyond it.
    in_range = ahead_of && d < {15'd0, k_range};
`else
    in_range = ahead_of && d <= {15'd0, k_range};
`endif
    idx = 8'(d - 24'd1);
    was_placed = in_range && ahead[idx];

    // A READ takes PSNs epsn .. epsn + psns - 1; the run is counted from the next one.
    if (in_read) src = (in_psns - 24'd1 >= 24'd256) ? '0 : ahead >> (in_psns - 24'd1);
    else src = ahead;
    placed_one = ~src & (src + 256'd1);  // the lowest 0 bit, one-hot (0: all ones)
    run_end = placed_one - 256'd1;
    run = (placed_one == '0) ? 9'd256 : 9'($countones(run_end));
    step = {1'b0, run} + 10'd1;
    adv_ahead = (step >= 10'd256) ? '0 : src >> step;
    adv_epsn = in_read ? in_psns + epsn + 24'(run) : epsn + 24'd1 + 24'(run);

    reply = NONE;
    out_psn = '0;
    placed = 1'b0;
    read_taken = 1'b0;
    duplicate = 1'b0;
    beyond = 1'b0;
    out_of_order = 1'b0;
    trimmed = 1'b0;
    delivered = '0;
    n_epsn = epsn;
    n_ahead = ahead;
    n_unacked = unacked;
    n_nak_sent = nak_sent;
    sack = 1'b0;
    sum_unacked = unacked + 32'd1;

    if (in_valid) begin
      unique case (k_mode)
        GBN: begin
          if (in_order) begin
            placed = 1'b1;
            read_taken = in_read;
            n_epsn = in_read ? epsn + in_psns : epsn + 24'd1;
`ifdef FABRICSIM_MUTANT_4
            // Mutant 4: the NAK flag is not cleared when the gap fills: a later gap is not NAKed.
`else
            n_nak_sent = 1'b0;
`endif
            if (in_read) n_unacked = '0;
            else if (sum_unacked >= {11'd0, k_ack_every} || in_flag) begin
              n_unacked = '0;
              reply = ACK;
              out_psn = in_psn;
            end else n_unacked = sum_unacked;
          end else if (behind) begin
            duplicate = 1'b1;
            if (!in_read) begin
              reply = ACK;
              out_psn = epsn - 24'd1;
            end
          end else begin
            out_of_order = 1'b1;
            if (!nak_sent) begin
              n_nak_sent = 1'b1;
              reply = NAK;
              out_psn = epsn;
            end
          end
        end
        SR: begin
          if (in_read) begin
            if (behind) duplicate = 1'b1;
            else if (!in_order) out_of_order = 1'b1;
            else begin
              placed = 1'b1;
              read_taken = 1'b1;
              delivered = {1'b0, run};
              n_epsn = adv_epsn;
              n_ahead = adv_ahead;
              if (run != 9'd0 || adv_ahead != '0) begin
                n_unacked = '0;
                reply = ACK;
                sack = 1'b1;
              end
            end
          end else if (behind || was_placed) begin
            duplicate = 1'b1;
            reply = ACK;
            sack = 1'b1;
          end else if (ahead_of && !in_range) begin
            beyond = 1'b1;
          end else if (ahead_of) begin
            placed = 1'b1;
            out_of_order = 1'b1;
            n_ahead = ahead | (256'd1 << idx);
            reply = NAK;
            sack = 1'b1;
          end else begin
            placed = 1'b1;
            delivered = step;
            n_epsn = adv_epsn;
            n_ahead = adv_ahead;
            sum_unacked = unacked + {22'd0, step};
`ifdef FABRICSIM_MUTANT_3
            // Mutant 3: ACK coalescing one packet late (> instead of >=).
            if (sum_unacked > {11'd0, k_ack_every} || in_flag || adv_ahead != '0) begin
`else
            if (sum_unacked >= {11'd0, k_ack_every} || in_flag || adv_ahead != '0) begin
`endif
              n_unacked = '0;
              reply = ACK;
              sack = 1'b1;
            end else n_unacked = sum_unacked;
          end
        end
        default: begin  // RUD: every packet answered (but those beyond the range)
          sack = 1'b1;
          if (behind || was_placed) begin
            duplicate = 1'b1;
            reply = ACK;
          end else if (ahead_of && !in_range) begin
            beyond = 1'b1;
            sack = 1'b0;
          end else if (in_flag) begin
            trimmed = 1'b1;
            reply = NAK;
          end else if (ahead_of) begin
            placed = 1'b1;
            out_of_order = 1'b1;
            n_ahead = ahead | (256'd1 << idx);
            reply = ACK;
          end else begin
            placed = 1'b1;
            delivered = step;
            n_epsn = adv_epsn;
            n_ahead = adv_ahead;
            reply = ACK;
          end
        end
      endcase
    end

    // The SACK, from the state after the packet: selective, the 63 PSNs after the expected one;
    // RUD, the 32-PSN block holding the packet's PSN (block 0 if it is behind or in order).
    d2 = in_psn - n_epsn;
    blk = (d2[23] || d2 == '0) ? 5'd0 : (d2[23:5] > 19'd31) ? 5'd31 : d2[9:5];
    ext = {n_ahead, 1'b0};
    ext_sh = 32'(ext >> {blk, 5'd0});
    cum = '0;
    bitmap = '0;
    block = '0;
    if (sack) begin
      cum = n_epsn - 24'd1;
      if (k_mode == RUD) begin
        block = blk;
        bitmap = {32'd0, ext_sh};
      end else bitmap = {n_ahead[62:0], 1'b0};
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      k_mode <= mode;
      k_range <= range;
      k_ack_every <= ack_every;
      epsn <= first_psn;
      ahead <= '0;
      unacked <= '0;
      nak_sent <= 1'b0;
    end else begin
      epsn <= n_epsn;
      ahead <= n_ahead;
      unacked <= n_unacked;
      nak_sent <= n_nak_sent;
    end
  end
endmodule
