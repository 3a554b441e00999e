      /* Bits, not values, travel: the element arrives exactly as stored. */
      wg_elem y[WG_VEC];
#pragma unroll
      for (int k = 0; k < WG_VEC / WG_SUB; k++) {
        /* Where element WG_LANE of the group sits in its lane's chunk. */
        const int slot = WG_LANES > 1 ? WG_LANE % WG_VEC : k * WG_SUB + WG_LANE;
        wg_bits b = WG_VALID(slot) ? wg_to_bits(x[u][slot]) : (wg_bits)0;
${exchange}#pragma unroll
        for (int j = 0; j < WG_SUB; j++) y[k * WG_SUB + j] = wg_from_bits(b);
      }
      wg_put(out, e, y, vector, full, n);
