    const wg_bits b = valid ? wg_to_bits(in[i]) : (wg_bits)0;
    /* Lanes past the end share nothing with real ones: drop them. */
    const unsigned present = __ballot_sync(gmask, valid);
    const unsigned same = __match_any_sync(gmask, b) & present;
    if (valid) out[i] = same >> (lane & ~(WG_WIDTH - 1u));
