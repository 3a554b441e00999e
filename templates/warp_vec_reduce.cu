      /* Each lane folds its WG_SUB elements of every group it holds, as a
       * pairwise tree. */
      wg_acc p[WG_VEC / WG_SUB];
#pragma unroll
      for (int k = 0; k < WG_VEC / WG_SUB; k++) {
        wg_acc t[WG_SUB];
#pragma unroll
        for (int j = 0; j < WG_SUB; j++) t[j] = WG_ACC(u, k * WG_SUB + j);
#pragma unroll
        for (int w = 1; w < WG_SUB; w *= 2)
#pragma unroll
          for (int j = 0; j + w < WG_SUB; j += 2 * w) t[j] = wg_combine(t[j], t[j + w]);
        p[k] = t[0];
      }
      if (WG_LANES > 1) { /* one value a lane is left: across the group's lanes */
        wg_acc v = p[0];
${exchange}        p[0] = v;
      }
${store}