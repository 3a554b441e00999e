      /* One element a lane (WG_VEC is 1): match.any compares lanes. Bits,
       * not values: the same bits match. */
      const wg_bits b = WG_VALID(0) ? wg_to_bits(x[u][0]) : (wg_bits)0;
      /* Lanes past the end share nothing with real ones: drop them. */
      const unsigned present = full ? 0xffffffffu : __ballot_sync(gmask, WG_VALID(0));
      const unsigned same = __match_any_sync(gmask, b) & present;
      if (WG_VALID(0)) out[e] = same >> (lane & ~(WG_WIDTH - 1u));
