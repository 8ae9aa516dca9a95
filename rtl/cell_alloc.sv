// cell_alloc: the shared-buffer cell allocator, a FIFO free list of CELLS cell ids with one
// allocate and one free port per cycle and an occupancy count. The list starts as 0, 1, ...,
// CELLS-1 (allocation pops the head, a free pushes at the tail), built without an initialisation
// pass: ids never allocated since reset come from a counter (`fresh`), freed ids from a ring of
// CELLS entries that follows them, which is the same FIFO order. A bitmap of allocated ids rejects
// a free of an id that is not allocated (double free or bad id). Ports: clk, rst_n (synchronous,
// active low); alloc_req -> alloc_ok / alloc_id; free_req + free_id -> free_err; free_count and
// occupancy (= CELLS - free_count). Timing: alloc_ok, alloc_id and free_err are combinational from
// the state before the clock edge (a show-ahead free list: an id is granted in the cycle it is
// requested), the state changes on the edge, so an id freed in cycle t can be allocated from cycle
// t+1 on; one allocation and one free per cycle. Parameter: CELLS (a power of two >= 2).
module cell_alloc #(
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
    output logic [  IDW:0] occupancy
);
  logic [IDW:0] fresh;  // next never-allocated id; CELLS once all have been handed out
  logic [IDW-1:0] ring[CELLS];
  logic [IDW-1:0] head, tail;
  logic [IDW:0] ring_count;
  logic [CELLS-1:0] allocated;
  logic from_fresh;

  assign from_fresh = !fresh[IDW];  // fresh < CELLS
  assign alloc_ok = alloc_req && (from_fresh || ring_count != '0);
  assign alloc_id = from_fresh ? fresh[IDW-1:0] : ring[head];
  assign free_err = free_req && !allocated[free_id];
  assign free_count = (IDW + 1)'(CELLS) - fresh + ring_count;
  assign occupancy = (IDW + 1)'(CELLS) - free_count;

  wire do_free = free_req && !free_err;
  wire pop_ring = alloc_ok && !from_fresh;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      fresh <= '0;
      head <= '0;
      tail <= '0;
      ring_count <= '0;
      allocated <= '0;
    end else begin
      if (alloc_ok && from_fresh) fresh <= fresh + 1'b1;
      if (pop_ring) head <= head + 1'b1;
      if (do_free) begin
        ring[tail] <= free_id;
        tail <= tail + 1'b1;
      end
`ifdef FABRICSIM_MUTANT
      // Checker self-test: a free that coincides with an allocation from the ring is lost.
      ring_count <= ring_count + (IDW + 1)'(do_free && !pop_ring) - (IDW + 1)'(pop_ring);
`else
      ring_count <= ring_count + (IDW + 1)'(do_free) - (IDW + 1)'(pop_ring);
`endif
      // alloc_id is free and free_id allocated before the edge, so they never collide.
      if (alloc_ok) allocated[alloc_id] <= 1'b1;
      if (do_free) allocated[free_id] <= 1'b0;
    end
  end
endmodule
