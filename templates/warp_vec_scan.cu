      wg_out y[WG_VEC];
#pragma unroll
      for (int k = 0; k < WG_VEC / WG_SUB; k++) {
        /* The inclusive prefix of the lane's WG_SUB elements, in the thread. */
        wg_acc a[WG_SUB];
#pragma unroll
        for (int j = 0; j < WG_SUB; j++) a[j] = WG_ACC(u, k * WG_SUB + j);
#pragma unroll
        for (int j = 1; j < WG_SUB; j++) a[j] = wg_combine(a[j - 1], a[j]);
        wg_acc lead = wg_identity(); /* what comes before the lane's first element */
        if (WG_LANES > 1) {
          /* Scan the lanes' totals, shift by one lane: the lanes before. */
          wg_acc v = a[WG_SUB - 1];
${exchange}          const wg_acc before = ${shift};
          if (glane) {
            lead = before;
#pragma unroll
            for (int j = 0; j < WG_SUB; j++) a[j] = wg_combine(lead, a[j]);
          }
        }
${store}      }
      wg_put(out, e, y, vector, full, n);
