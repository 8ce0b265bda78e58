/* Stand-ins for vmm_pause, vmm_resume and vmm_ctrl_alt_del until the
 * vmmctl branch (vCPU pause, the i8042) lands: each says it cannot. Drop
 * this file when merging vmmctl. */
#include "vmm/vmm.h"

int vmm_pause(struct vmm *v)
{
	(void)v;
	return -1;
}

int vmm_resume(struct vmm *v)
{
	(void)v;
	return -1;
}

int vmm_ctrl_alt_del(struct vmm *v)
{
	(void)v;
	return -1;
}
