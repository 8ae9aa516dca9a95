// crc32_stream: the Ethernet FCS (CRC-32, IEEE 802.3: reflected polynomial 0xEDB88320, register
// preset to all ones, result inverted) over a byte stream arriving W bytes per cycle. Ports: clk,
// rst_n (synchronous, active low); in_valid, in_sof (first beat of a frame: the register restarts
// from all ones), in_eof (last beat), in_data (byte b of the beat, in wire order, in bits
// [8b+7:8b]) and in_nbytes (bytes valid on an eof beat, 1..W, counted from byte 0; every other
// valid beat carries W); fcs_valid / fcs (the frame's FCS, i.e. the value that is sent on the wire
// least significant byte first) and crc_state (the running register). Timing: one beat per cycle,
// any number of idle cycles inside or between frames, sof may follow eof in the next cycle; fcs is
// registered, valid for one cycle after the eof edge (latency 1 cycle, throughput W bytes/cycle).
// A new sof restarts the register (an aborted frame yields no FCS). Parameter: W (bytes per cycle).
module crc32_stream #(
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
    output logic [   31:0] crc_state
);
  localparam logic [31:0] POLY = 32'hEDB88320;

  // The register after the beat's valid bytes, a bit at a time (synthesis flattens this into an
  // XOR network).
  function automatic logic [31:0] crc_beat(input logic [31:0] c0, input logic [8*W-1:0] d,
                                           input logic [NBW-1:0] n);
    logic [31:0] c;
    c = c0;
    for (int b = 0; b < W; b++) begin
      if (NBW'(b) < n) begin
        c = c ^ {24'd0, d[8*b+:8]};
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (c[0] ? POLY : 32'd0);
      end
    end
    return c;
  endfunction

  logic [31:0] next;
`ifdef FABRICSIM_MUTANT
  // Checker self-test: a short last beat processes one byte too many (off by one).
  assign next = crc_beat(in_sof ? 32'hFFFFFFFF : crc_state, in_data,
                         (in_eof && in_nbytes < NBW'(W)) ? in_nbytes + 1'b1 : NBW'(W));
`elsif FABRICSIM_MUTANT_2
  // Mutant 2: only a single-beat frame's sof restarts the register (wrong after an aborted frame).
  assign next = crc_beat((in_sof && in_eof) ? 32'hFFFFFFFF : crc_state, in_data,
                         in_eof ? in_nbytes : NBW'(W));
`else
  assign next = crc_beat(in_sof ? 32'hFFFFFFFF : crc_state, in_data,
                         in_eof ? in_nbytes : NBW'(W));
`endif

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      crc_state <= 32'hFFFFFFFF;
      fcs_valid <= 1'b0;
      fcs <= '0;
    end else begin
      fcs_valid <= in_valid && in_eof;
`ifdef FABRICSIM_MUTANT_3
      // Mutant 3: an idle cycle inside a frame still clocks the register.
      if (1'b1) begin
`else
      if (in_valid) begin
`endif
        crc_state <= in_eof ? 32'hFFFFFFFF : next;
        if (in_eof) fcs <= ~next;
      end
    end
  end
endmodule
