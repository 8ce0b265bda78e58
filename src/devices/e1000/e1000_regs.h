// SPDX-License-Identifier: Apache-2.0
/* 82540EM register offsets and bits (PCI/PCI-X Family of Gigabit Ethernet
 * Controllers Software Developer's Manual, ch. 13), and descriptor layouts
 * (ch. 3). Only what skiff's model uses. */
#ifndef SKIFF_E1000_REGS_H
#define SKIFF_E1000_REGS_H

#define E1000_CTRL	0x0000
#define E1000_STATUS	0x0008
#define E1000_EECD	0x0010
#define E1000_EERD	0x0014
#define E1000_CTRL_EXT	0x0018
#define E1000_VET	0x0038 /* VLAN Ethertype: the TPID tags carry */
#define E1000_MDIC	0x0020
#define E1000_ICR	0x00c0
#define E1000_ITR	0x00c4
#define E1000_ICS	0x00c8
#define E1000_IMS	0x00d0
#define E1000_IMC	0x00d8
#define E1000_RCTL	0x0100
#define E1000_TCTL	0x0400
#define E1000_TIPG	0x0410
#define E1000_LEDCTL	0x0e00
#define E1000_PBA	0x1000
#define E1000_RDBAL	0x2800
#define E1000_RDBAH	0x2804
#define E1000_RDLEN	0x2808
#define E1000_RDH	0x2810
#define E1000_RDT	0x2818
#define E1000_RDTR	0x2820
#define E1000_RXDCTL	0x2828
#define E1000_RADV	0x282c
#define E1000_DELAY_FPD 0x80000000 /* RDTR, TIDV: flush (interrupt now) */
#define E1000_TDBAL	0x3800
#define E1000_TDBAH	0x3804
#define E1000_TDLEN	0x3808
#define E1000_TDH	0x3810
#define E1000_TDT	0x3818
#define E1000_TIDV	0x3820
#define E1000_TXDCTL	0x3828
#define E1000_TADV	0x382c
#define E1000_STATS	0x4000 /* 0x4000-0x40ff: statistics, clear on read */
#define E1000_STATS_END 0x4100
#define E1000_RXCSUM	0x5000
#define E1000_MTA	0x5200 /* 128 dwords */
#define E1000_RA	0x5400 /* 16 pairs RAL/RAH */
#define E1000_VFTA	0x5600 /* 128 dwords */
#define E1000_WUC	0x5800
#define E1000_MANC	0x5820

#define E1000_VLAN_TPID 0x8100 /* VET's reset value */
#define E1000_VLAN_LEN	4

#define E1000_REG_END  0x6000 /* registers kept; the rest of the BAR reads 0 */
#define E1000_BAR_SIZE 0x20000
#define E1000_IO_BAR   2 /* after the 64-bit memory BAR 0-1 (Linux takes the first) */
#define E1000_IO_SIZE  8 /* IOADDR, IODATA */

/* Statistics (offsets from E1000_STATS) */
#define E1000_MPC   0x010
#define E1000_GPRC  0x074
#define E1000_BPRC  0x078
#define E1000_MPRC  0x07c
#define E1000_GPTC  0x080
#define E1000_GORCL 0x088
#define E1000_GOTCL 0x090
#define E1000_RNBC  0x0a0
#define E1000_ROC   0x0ac
#define E1000_TORL  0x0c0
#define E1000_TOTL  0x0c8
#define E1000_TPR   0x0d0
#define E1000_TPT   0x0d4
#define E1000_MPTC  0x0f0
#define E1000_BPTC  0x0f4

#define E1000_CTRL_FD	    0x00000001
#define E1000_CTRL_ASDE	    0x00000020
#define E1000_CTRL_SLU	    0x00000040
#define E1000_CTRL_SPD_1000 0x00000200
#define E1000_CTRL_RST	    0x04000000
#define E1000_CTRL_VME	    0x40000000 /* VLAN mode: tag TX (VLE), strip RX */
#define E1000_CTRL_PHY_RST  0x80000000

#define E1000_STATUS_FD		0x00000001
#define E1000_STATUS_LU		0x00000002
#define E1000_STATUS_SPEED_1000 0x00000080
#define E1000_STATUS_ASDV_1000	0x00000200

#define E1000_EECD_SK	0x001
#define E1000_EECD_CS	0x002
#define E1000_EECD_DI	0x004
#define E1000_EECD_DO	0x008
#define E1000_EECD_REQ	0x040
#define E1000_EECD_GNT	0x080
#define E1000_EECD_PRES 0x100

#define E1000_EERD_START      0x00000001
#define E1000_EERD_DONE	      0x00000010
#define E1000_EERD_ADDR_SHIFT 8
#define E1000_EERD_DATA_SHIFT 16

#define E1000_MDIC_DATA	     0x0000ffff
#define E1000_MDIC_REG_SHIFT 16
#define E1000_MDIC_PHY_SHIFT 21
#define E1000_MDIC_OP_WRITE  0x04000000
#define E1000_MDIC_OP_READ   0x08000000
#define E1000_MDIC_READY     0x10000000
#define E1000_MDIC_INT_EN    0x20000000
#define E1000_MDIC_ERROR     0x40000000

#define E1000_ICR_TXDW	   0x00000001
#define E1000_ICR_TXQE	   0x00000002
#define E1000_ICR_LSC	   0x00000004
#define E1000_ICR_RXDMT0   0x00000010
#define E1000_ICR_RXO	   0x00000040
#define E1000_ICR_RXT0	   0x00000080
#define E1000_ICR_MDAC	   0x00000200
#define E1000_ICR_ASSERTED 0x80000000
#define E1000_ICR_VALID	   0x0001ffff /* causes the 82540 implements */

#define E1000_RCTL_EN	       0x00000002
#define E1000_RCTL_UPE	       0x00000008
#define E1000_RCTL_MPE	       0x00000010
#define E1000_RCTL_LPE	       0x00000020
#define E1000_RCTL_RDMTS_SHIFT 8
#define E1000_RCTL_MO_SHIFT    12
#define E1000_RCTL_BAM	       0x00008000
#define E1000_RCTL_BSIZE_SHIFT 16
#define E1000_RCTL_BSEX	       0x02000000
#define E1000_RCTL_SECRC       0x04000000

#define E1000_TCTL_EN 0x00000002

#define E1000_RAH_AV 0x80000000

/* Descriptors: 16 bytes, little-endian. */
#define E1000_DESC_LEN 16

/* TX: lower dword (bytes 8-11) of legacy and data descriptors */
#define E1000_TXD_DTYP_D     0x00100000 /* data (with DEXT); 0 = context */
#define E1000_TXD_DTYP_MASK  0x00f00000
#define E1000_TXD_CMD_EOP    0x01000000
#define E1000_TXD_CMD_IFCS   0x02000000
#define E1000_TXD_CMD_IC     0x04000000 /* legacy: insert checksum */
#define E1000_TXD_CMD_TSE    0x04000000 /* data/context: TCP segmentation */
#define E1000_TXD_CMD_RS     0x08000000
#define E1000_TXD_CMD_DEXT   0x20000000
#define E1000_TXD_CMD_VLE    0x40000000 /* insert the descriptor's special as a tag */
#define E1000_TXD_CMD_IDE    0x80000000 /* interrupt delay (TIDV/TADV) */
#define E1000_TXD_CMD_TCP    0x01000000 /* context TUCMD */
#define E1000_TXD_CMD_IP     0x02000000 /* context TUCMD: IPv4 */
#define E1000_TXD_STAT_DD    0x01	/* byte 12 */
#define E1000_TXD_POPTS_IXSM 0x01	/* byte 13 of a data descriptor */
#define E1000_TXD_POPTS_TXSM 0x02
#define E1000_TXD_SPECIAL    14 /* bytes 14-15: the VLAN tag's TCI (VLE) */

/* RX legacy descriptor: addr(8) length(2) csum(2) status(1) errors(1) special(2) */
#define E1000_RXD_STAT_DD    0x01
#define E1000_RXD_STAT_EOP   0x02
#define E1000_RXD_STAT_IXSM  0x04
#define E1000_RXD_STAT_VP    0x08  /* a tag was stripped: its TCI in special */
#define E1000_RXD_STAT_TCPCS 0x20  /* TCP/UDP checksum checked */
#define E1000_RXD_STAT_IPCS  0x40  /* IPv4 header checksum checked */
#define E1000_RXCSUM_IPOFL   0x100 /* RXCSUM: IPv4 header checksum offload */
#define E1000_RXCSUM_TUOFL   0x200 /* RXCSUM: TCP/UDP checksum offload */

/* PHY (M88E1011) registers, through MDIC at address 1 */
#define E1000_PHY_ADDR	    1
#define PHY_CTRL	    0x00
#define PHY_STATUS	    0x01
#define PHY_ID1		    0x02
#define PHY_ID2		    0x03
#define PHY_AUTONEG_ADV	    0x04
#define PHY_LP_ABILITY	    0x05
#define PHY_1000T_CTRL	    0x09
#define PHY_1000T_STATUS    0x0a
#define PHY_EXT_STATUS	    0x0f
#define M88_PHY_SPEC_CTRL   0x10
#define M88_PHY_SPEC_STATUS 0x11
#define PHY_CTRL_RESET	    0x8000
#define PHY_CTRL_RESTART_AN 0x0200

#define E1000_EEPROM_WORDS    64
#define E1000_EEPROM_CHECKSUM 0xbaba /* the 64 words sum to this */

#endif
