/* The decoupled look-back's knobs (src/codegen.c, wg_codegen_lookback; the
 * families whose tiles find their place by one: scan, compact). Warp 0 of
 * a tile polls WG_LB_K words a lane at once, so a window of WG_LB_WINDOW
 * tiles costs one L2 round trip. In grids of at least WG_LB_PATIENT_GRID
 * tiles it sleeps WG_LB_FIRST_SLEEP ns after publishing its tile's
 * aggregate, before its first poll (its predecessors are still busy:
 * early polls only load the L2 that every block streams through), and
 * WG_LB_SLEEP ns between polls after WG_LB_SPINS of them; smaller grids,
 * whose latency is the whole call, spin (32 ns sleeps after 8 polls). */
#define WG_LB_PATIENT_GRID 500u
#define WG_LB_K ${lb_k}
#define WG_LB_WINDOW (32 * WG_LB_K)
#define WG_LB_FIRST_SLEEP ${lb_first_sleep}
#define WG_LB_SLEEP ${lb_sleep}
#define WG_LB_SPINS ${lb_spins}
